import { useEffect, useState } from 'react';
import { ConsoleAssignablePeopleDocument, ConsolePeopleDocument } from '../../../generated/console.js';
import { request } from '../api.js';
import { hasRole, type User } from '../session.js';

/** An action's author as GraphQL names it: a person (`user`) or an API client (`client`). */
export interface Actor {
  kind: string;
  id: string;
  /** Named by the server for every reader who may know it (`TriageActor.name`). */
  name?: string | null;
}

/** An investigation's assignee as the server names it (`Investigation.assignee`). */
export interface Assignee {
  id: string;
  name: string;
}

/** The tenant's people an admin may list, by name and email (email alone without a name); for an analyst, those who can triage, by name. */
async function knownPeople(isAdmin: boolean, customerId: string, signal: AbortSignal): Promise<Map<string, string>> {
  if (isAdmin) {
    const { users } = await request(ConsolePeopleDocument, { customerId }, signal);
    return new Map(users.map((person) => [person.id, person.name ? `${person.name} (${person.email})` : person.email]));
  }
  const { assignablePeople } = await request(ConsoleAssignablePeopleDocument, { customerId }, signal);
  return new Map(assignablePeople.map((person) => [person.id, person.name]));
}

/**
 * Names people by their user id: "You"; for admins (who may list a tenant's people) their name and email;
 * for analysts the name of those who can triage. Where the list has none (a viewer, a list that
 * failed), the name the server gives every reader (`Investigation.assignee`, `TriageActor.name`),
 * else the id: a name is a convenience here, never worth an error on the page.
 */
export function usePeopleNames(user: User, customerId: string) {
  const [known, setKnown] = useState<ReadonlyMap<string, string>>(new Map());
  const mayList = hasRole(user, 'analyst');
  const isAdmin = hasRole(user, 'admin');
  useEffect(() => {
    if (!mayList) return;
    const controller = new AbortController();
    knownPeople(isAdmin, customerId, controller.signal).then(setKnown, () => undefined);
    return () => controller.abort();
  }, [mayList, isAdmin, customerId]);
  /** A person by id: "You", the name this page could list, the server's name, else the id. */
  const person = (id: string, named?: string | null) => (id === user.id ? 'You' : (known.get(id) ?? named ?? id));
  return {
    assignee: (id: string | null, named?: Assignee | null) => (id == null ? 'Unassigned' : person(id, named?.name)),
    actor: (actor: Actor) => (actor.kind === 'user' ? person(actor.id, actor.name) : `API client ${actor.name ?? actor.id}`),
  };
}

export type PeopleNames = ReturnType<typeof usePeopleNames>;
