import DataLoader from 'dataloader';
import type { Session } from '../../auth/session.js';
import type { ActorNameStore } from './actor-names.store.js';
import { displayName } from './users.service.js';

/** Who acted: a person (`user`) or an API client (`client`); any other kind has no name. */
export interface NamedActor {
  kind: string;
  id: string;
}

/**
 * The names of who acted, as the triage history and the audit log show them: a person by their
 * display name (else their email's local part), an API client by its description. Null for one
 * outside the caller's tree (a child is not shown its MSP's people), a client without a
 * description, or nobody. A request's names take one statement per kind of actor (`key`: the
 * request's context object; its loader is collected with it). The caller has checked that the
 * session may read what the actor did.
 */
export class ActorNames {
  private readonly loaders = new WeakMap<object, DataLoader<string, string | null>>();

  constructor(private readonly store: ActorNameStore) {}

  nameOf(session: Session, actor: NamedActor, key: object): Promise<string | null> {
    if (actor.kind !== 'user' && actor.kind !== 'client') return Promise.resolve(null);
    let loader = this.loaders.get(key);
    if (!loader) {
      loader = new DataLoader((keys: readonly string[]) => this.load(session, keys));
      this.loaders.set(key, loader);
    }
    return loader.load(`${actor.kind}:${actor.id}`);
  }

  private async load(session: Session, keys: readonly string[]): Promise<Array<string | null>> {
    const idsOf = (kind: string) => keys.filter((k) => k.startsWith(`${kind}:`)).map((k) => k.slice(kind.length + 1));
    const [userIds, clientIds] = [idsOf('user'), idsOf('client')];
    const scope = await session.tenantScope();
    const [people, clients] = await Promise.all([
      userIds.length ? this.store.people(scope, userIds) : [],
      clientIds.length ? this.store.clients(scope, clientIds) : [],
    ]);
    const names = new Map<string, string | null>([
      ...people.map((p): [string, string] => [`user:${p.id}`, displayName(p)]),
      ...clients.map((c): [string, string | null] => [`client:${c.id}`, c.description]),
    ]);
    return keys.map((k) => names.get(k) ?? null);
  }
}
