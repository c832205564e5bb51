import type { Session } from '../../auth/session.js';
import { badRequest, notFound } from '../../errors.js';
import type { Event, Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import { MAX_ID_LENGTH, newId, plausibleId } from '../../infra/ids.js';
import type { Logger } from '../../infra/logger.js';
import { type PubSub, eventStream, topic } from '../../infra/pubsub.js';
import type { EventPosition, EventStore, Tx } from './events.store.js';
import { EVENT_TOPICS, type EventKind, type EventTopicName, isTopic, kindsOf, topicNames } from './topics.js';

export const EVENT_LIMITS = {
  /** Serialized `data`; events are summaries that point at their subject, not copies of it. */
  dataBytes: 16_384,
  subject: 200,
  page: { min: 1, default: 50, max: 200 },
  /** Events (and the automation runs they caused) older than this are pruned. */
  retentionDays: 90,
} as const;

/** What a producer records: one of the topics of topics.ts with one of its kinds. */
export type NewEvent = {
  [T in EventTopicName]: {
    /** The tenant the event happened in (not the caller's parent). */
    customerId: string;
    topic: T;
    kind: EventKind<T>;
    /** The id of what the event is about: a node, an investigation, a run... */
    subject?: string | null;
    /** A small JSON object, snake_case keys (it is served as is). */
    data?: Record<string, unknown>;
  };
}[EventTopicName];

/** The producer's side of the events service: inject this, not the whole service. */
export interface EventRecorder {
  record(event: NewEvent): Promise<Event | undefined>;
}

/** For code paths (and tests) without an events service. */
export const noEvents: EventRecorder = { record: async () => undefined };

/** Runs inside the recording transaction: whatever it writes commits with the event, or neither does. */
export type EventReaction = (tx: Tx, event: Event) => Promise<void>;

/** Every recorded event, from any process; subscribers read the row, so the payload stays small. */
export const eventRecordedTopic = topic<{ id: string; customerId: string; topic: string; kind: string }>('event_recorded');

export interface TopicSummary {
  topic: string;
  description: string;
  kinds: readonly string[];
  count: number;
  latestAt: Date | null;
}

export interface EventPageArgs {
  kind?: string | null;
  limit?: number | null;
  offset?: number | null;
  cursor?: string | null;
}

export interface EventPage {
  customerId: string;
  topic: string;
  events: Event[];
  total: number;
  limit: number;
  offset: number;
  nextCursor: string | null;
}

/**
 * Events (docs/events.md): producers record what happened; callers with the search_api scope read
 * a tenant's topics and records, newest first, and subscribe to new ones. A tenant outside the
 * caller's tree behaves as missing.
 */
export class EventService implements EventRecorder {
  private readonly reactions: EventReaction[] = [];

  constructor(
    private readonly store: EventStore,
    private readonly pubsub: PubSub,
    private readonly logger: Logger,
  ) {}

  /** Registers work that must commit together with every event (automation enqueues its runs). */
  react(reaction: EventReaction): void {
    this.reactions.push(reaction);
  }

  /**
   * Stores the event, runs the reactions in the same transaction, then publishes it. Never
   * throws: an event records something that already happened, and failing to write it must not
   * fail that. Failures are logged; the result is then `undefined`.
   */
  async record(input: NewEvent): Promise<Event | undefined> {
    try {
      const row = validate(input);
      const event = await this.store.insert(row, async (tx, created) => {
        for (const reaction of this.reactions) await reaction(tx, created);
      });
      await this.pubsub.publish(eventRecordedTopic, { id: event.id, customerId: event.customerId, topic: event.topic, kind: event.kind });
      return event;
    } catch (error) {
      this.logger.error('events.record_failed', { customerId: input.customerId, topic: input.topic, kind: input.kind, error });
      return undefined;
    }
  }

  /** Every topic, with the tenant's count and latest time (0 and null when it has none). */
  async topics(session: Session, customerId: string): Promise<{ customerId: string; topics: TopicSummary[] }> {
    const scope = await session.assertTenant('events.read', customerId);
    const stats = await this.store.topicStats(scope, customerId);
    return {
      customerId,
      topics: topicNames.map((name) => ({
        topic: name,
        description: EVENT_TOPICS[name].description,
        kinds: kindsOf(name),
        count: stats.get(name)?.count ?? 0,
        latestAt: stats.get(name)?.latestAt ?? null,
      })),
    };
  }

  /** One topic's events, newest first, by `offset` or by the `cursor` of the previous page. */
  async list(session: Session, customerId: string, topicName: string, args: EventPageArgs = {}): Promise<EventPage> {
    const scope = await session.assertTenant('events.read', customerId);
    const filter = { topic: knownTopic(topicName), kind: knownKind(topicName as EventTopicName, args.kind) };
    const { page: bounds } = EVENT_LIMITS;
    const limit = Math.min(bounds.max, Math.max(bounds.min, Math.trunc(args.limit ?? bounds.default)));
    if (args.offset !== null && args.offset !== undefined && args.offset < 0) throw badRequest('invalid_request', 'offset must be 0 or more');
    const after = args.cursor === null || args.cursor === undefined || args.cursor === '' ? undefined : decodeCursor(args.cursor);
    if (after && args.offset) throw badRequest('invalid_request', 'Give either cursor or offset, not both');
    const [events, total, older] = await Promise.all([
      this.store.page(scope, customerId, filter, { limit, offset: after ? 0 : (args.offset ?? 0), after }),
      this.store.count(scope, customerId, filter),
      after ? this.store.count(scope, customerId, filter, after) : Promise.resolve(undefined),
    ]);
    const offset = older === undefined ? (args.offset ?? 0) : total - older;
    const last = events.at(-1);
    const nextCursor = last && offset + events.length < total ? encodeCursor(last) : null;
    return { customerId, topic: filter.topic, events, total, limit, offset, nextCursor };
  }

  /**
   * New events of a tenant (optionally one topic) as they are recorded, by any process. Access
   * is checked now, once; the stream ends when the subscriber leaves.
   */
  async watch(session: Session, customerId: string, topicName?: string | null): Promise<AsyncIterableIterator<Event>> {
    const scope = await session.assertTenant('events.read', customerId);
    const only = topicName === null || topicName === undefined ? undefined : knownTopic(topicName);
    let unsubscribe = () => {};
    const stream = eventStream<Event>(() => unsubscribe());
    // Reads are chained so that events are delivered in the order they were announced.
    let chain = Promise.resolve();
    unsubscribe = await this.pubsub.subscribe(eventRecordedTopic, (announced) => {
      if (announced.customerId !== customerId || (only && announced.topic !== only)) return;
      chain = chain
        .then(async () => {
          const event = await this.store.find(scope, customerId, announced.id);
          if (event) stream.push(event);
        })
        .catch((error) => this.logger.error('events.watch_read_failed', { id: announced.id, error }));
    });
    return stream.iterator;
  }

  /** Drops events past the retention (their automation runs go with them). */
  async prune(now = new Date()): Promise<number> {
    return this.store.prune(new Date(now.getTime() - EVENT_LIMITS.retentionDays * 86_400_000));
  }
}

function knownTopic(name: string): EventTopicName {
  if (!isTopic(name)) throw notFound('not_found', `No event topic "${name.slice(0, MAX_ID_LENGTH)}"; topics are ${topicNames.join(', ')}`);
  return name;
}

function knownKind(topicName: EventTopicName, kind: string | null | undefined): string | undefined {
  if (kind === null || kind === undefined || kind === '') return undefined;
  if (!kindsOf(topicName).includes(kind)) {
    throw badRequest('invalid_request', `kind must be one of ${kindsOf(topicName).join(', ')} for topic ${topicName}`);
  }
  return kind;
}

/** Opaque to clients: the last event of the page (time and id). */
export function encodeCursor(at: EventPosition): string {
  return Buffer.from(`${at.createdAt.getTime()}:${at.id}`).toString('base64url');
}

function decodeCursor(cursor: string): EventPosition {
  const invalid = () => badRequest('invalid_cursor', 'cursor is not one this server issued; use next_cursor as given');
  if (cursor.length > 400 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,15}):([a-z]+_[a-z2-7]{1,40})$/.exec(text);
  if (!match) throw invalid();
  return { createdAt: new Date(Number(match[1])), id: match[2] };
}

/** Checks a producer's event; failures here are bugs in the producer (logged by `record`). */
function validate(input: NewEvent) {
  if (typeof input.customerId !== 'string' || !plausibleId(input.customerId)) throw new Error('event customerId is missing');
  if (!isTopic(input.topic) || !kindsOf(input.topic).includes(input.kind)) throw new Error(`unknown event ${input.topic}/${input.kind}`);
  const subject = input.subject ?? null;
  if (subject !== null && (typeof subject !== 'string' || subject.length > EVENT_LIMITS.subject)) throw new Error('event subject is too long');
  // Through JSON and back: Dates become ISO strings, undefined fields disappear, as they will be served.
  const json = JSON.stringify(input.data ?? {});
  if (Buffer.byteLength(json) > EVENT_LIMITS.dataBytes) throw new Error(`event data is over ${EVENT_LIMITS.dataBytes} bytes`);
  const data = JSON.parse(json) as unknown;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('event data must be an object');
  return { id: newId('evt'), customerId: input.customerId, topic: input.topic, kind: input.kind, subject, data: data as PrismaTypes.InputJsonObject };
}
