import { useEffect, useState } from 'react';
import { ConsolePeopleDocument } from '../../../generated/console.js';
import { request } from '../api.js';
import { hasRole, type User } from '../session.js';

/** An action's author as GraphQL names it: a person (`user`) or an API client (`client`). */
export interface Actor {
  kind: string;
  id: string;
}

/**
 * Names people by their user id: "You", or for admins (the only role that may list a tenant's
 * people) their email. Anyone else, or an admin whose list failed, sees the id: a name is a
 * convenience here, never worth an error on the page.
 */
export function usePeopleNames(user: User, customerId: string) {
  const [emails, setEmails] = useState<ReadonlyMap<string, string>>(new Map());
  const isAdmin = hasRole(user, 'admin');
  useEffect(() => {
    if (!isAdmin) return;
    const controller = new AbortController();
    request(ConsolePeopleDocument, { customerId }, controller.signal).then(
      ({ users }) => setEmails(new Map(users.map((person) => [person.id, person.email]))),
      () => undefined,
    );
    return () => controller.abort();
  }, [isAdmin, customerId]);
  const person = (id: string) => (id === user.id ? 'You' : (emails.get(id) ?? id));
  return {
    person,
    assignee: (id: string | null) => (id == null ? 'Unassigned' : person(id)),
    actor: (actor: Actor) => (actor.kind === 'user' ? person(actor.id) : `API client ${actor.id}`),
  };
}

export type PeopleNames = ReturnType<typeof usePeopleNames>;
