import type { Database } from './database.js';
import type { Logger } from './logger.js';

/**
 * A named channel with the type of what travels on it. Payloads cross process boundaries as JSON
 * through PostgreSQL NOTIFY, so keep them small (ids and states, well under NOTIFY's 8000 bytes)
 * and let the receiver read anything else from the database.
 */
export interface Topic<T> {
  readonly channel: string;
  /** Phantom: carries T for the type checker only. */
  readonly __payload?: T;
}

export const topic = <T>(channel: string): Topic<T> => ({ channel });

/**
 * Typed publish/subscribe over `db.notify`/`db.listen`. Every message, also one published in
 * this very process, comes back through the database: a subscriber sees the same stream
 * whichever process made the change, and in the same order as everyone else.
 */
export class PubSub {
  private readonly local = new Map<string, Set<(payload: unknown) => void>>();
  private readonly listening = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Pick<Database, 'notify' | 'listen'>,
    private readonly logger: Logger,
  ) {}

  async publish<T>(topic: Topic<T>, payload: T): Promise<void> {
    await this.db.notify(topic.channel, JSON.stringify(payload));
  }

  /**
   * Calls `handler` for every message on the topic until the returned function is called.
   * Resolves once the database listens, so nothing published after it resolves is missed.
   */
  async subscribe<T>(topic: Topic<T>, handler: (payload: T) => void): Promise<() => void> {
    let handlers = this.local.get(topic.channel);
    if (!handlers) this.local.set(topic.channel, (handlers = new Set()));
    const entry = handler as (payload: unknown) => void;
    handlers.add(entry);
    try {
      await this.listen(topic.channel);
    } catch (error) {
      handlers.delete(entry);
      throw error;
    }
    return () => void handlers.delete(entry);
  }

  /** The topic as an async iterator (for GraphQL subscriptions); `return()` unsubscribes at once. */
  async iterate<T>(topic: Topic<T>, filter: (payload: T) => boolean = () => true): Promise<AsyncIterableIterator<T>> {
    const stream = eventStream<T>(() => unsubscribe());
    const unsubscribe = await this.subscribe(topic, (payload) => filter(payload) && stream.push(payload));
    return stream.iterator;
  }

  /** One database listener per channel and process; local subscribers fan out from it. */
  private listen(channel: string): Promise<unknown> {
    let ready = this.listening.get(channel);
    if (!ready) {
      ready = this.db.listen(channel, (raw) => this.deliver(channel, raw));
      this.listening.set(channel, ready);
      ready.catch(() => this.listening.delete(channel));
    }
    return ready;
  }

  private deliver(channel: string, raw: string): void {
    let payload: unknown;
    try {
      payload = JSON.parse(raw);
    } catch (error) {
      this.logger.warn('pubsub.bad_payload', { channel, error });
      return;
    }
    for (const handler of this.local.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.logger.error('pubsub.handler_failed', { channel, error });
      }
    }
  }
}

export interface EventStream<T> {
  /** Queues a value for the consumer; ignored once the stream has ended. */
  push(value: T): void;
  /** Ends the stream after the values already queued. */
  end(): void;
  iterator: AsyncIterableIterator<T>;
}

/**
 * A push-driven async iterator. Unlike an async generator, `return()` takes effect immediately
 * even while the consumer waits for the next value (an async generator queues it behind the
 * pending `await`, so a quiet subscription would never clean up), and calls `cleanup` once.
 */
export function eventStream<T>(cleanup: () => void): EventStream<T> {
  const queue: T[] = [];
  const waiting: Array<(result: IteratorResult<T>) => void> = [];
  let ended = false;
  let cleaned = false;
  const finish = () => {
    ended = true;
    if (!cleaned) {
      cleaned = true;
      cleanup();
    }
  };
  const done = (): IteratorResult<T> => ({ value: undefined, done: true });

  const iterator: AsyncIterableIterator<T> = {
    next() {
      if (queue.length) return Promise.resolve({ value: queue.shift()!, done: false });
      if (ended) {
        finish();
        return Promise.resolve(done());
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    return() {
      queue.length = 0;
      finish();
      for (const resolve of waiting.splice(0)) resolve(done());
      return Promise.resolve(done());
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };

  return {
    push(value) {
      if (ended) return;
      const resolve = waiting.shift();
      if (resolve) resolve({ value, done: false });
      else queue.push(value);
    },
    end() {
      if (ended) return;
      ended = true;
      if (!queue.length) {
        finish();
        for (const resolve of waiting.splice(0)) resolve(done());
      }
    },
    iterator,
  };
}
