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

/** The tenant's people an admin may list, by email; for an analyst, those who can triage, by name. */
async function knownPeople(isAdmin: boolean, customerId: string, signal: AbortSignal): Promise<Map<string, string>> {
  if (isAdmin) {
    const { users } = await request(ConsolePeopleDocument, { customerId }, signal);
    return new Map(users.map((person) => [person.id, person.email]));
  }
  const { assignablePeople } = await request(ConsoleAssignablePeopleDocument, { customerId }, signal);
  return new Map(assignablePeople.map((person) => [person.id, person.name]));
}

/**
 * Names people by their user id: "You"; for admins (who may list a tenant's people) their email;
 * for analysts the name of those who can triage. Anyone else, or a list that failed, sees the id:
 * a name is a convenience here, never worth an error on the page. Assignees and actors come named
 * by the server for every role (`Investigation.assignee`, `TriageActor.name`), which stands in
 * where the list has no name.
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
  const person = (id: string) => (id === user.id ? 'You' : (known.get(id) ?? id));
  return {
    person,
    assignee: (id: string | null, named?: Assignee | null) => (id == null ? 'Unassigned' : id === user.id ? 'You' : (known.get(id) ?? named?.name ?? id)),
    actor: (actor: Actor) =>
      actor.kind === 'user' ? (actor.id === user.id ? 'You' : (known.get(actor.id) ?? actor.name ?? actor.id)) : `API client ${actor.name ?? actor.id}`,
  };
}

export type PeopleNames = ReturnType<typeof usePeopleNames>;
