import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { PubSub, eventStream, topic } from './pubsub.js';

/** NOTIFY/LISTEN as the database offers them: everything published comes back asynchronously. */
function fakeDb() {
  const handlers = new Map<string, Set<(payload: string) => void>>();
  let listens = 0;
  return {
    get listens() {
      return listens;
    },
    async notify(channel: string, payload: string) {
      setTimeout(() => handlers.get(channel)?.forEach((h) => h(payload)), 1);
    },
    async listen(channel: string, handler: (payload: string) => void) {
      listens++;
      if (!handlers.has(channel)) handlers.set(channel, new Set());
      handlers.get(channel)!.add(handler);
      return async () => void handlers.get(channel)!.delete(handler);
    },
  };
}

const changed = topic<{ id: string; n: number }>('thing_changed');

describe('PubSub', () => {
  it('delivers published messages through the database to filtered iterators', async () => {
    const pubsub = new PubSub(fakeDb(), createLogger('silent'));
    const events = await pubsub.iterate(changed, (e) => e.id === 'a');
    await pubsub.publish(changed, { id: 'b', n: 0 });
    await pubsub.publish(changed, { id: 'a', n: 1 });
    await pubsub.publish(changed, { id: 'a', n: 2 });
    expect((await events.next()).value).toEqual({ id: 'a', n: 1 });
    expect((await events.next()).value).toEqual({ id: 'a', n: 2 });
    await events.return!();
  });

  it('listens once per channel however many subscribe, and ignores payloads that are not JSON', async () => {
    const db = fakeDb();
    const pubsub = new PubSub(db, createLogger('silent'));
    const seen: number[] = [];
    await Promise.all([1, 2, 3].map(() => pubsub.subscribe(changed, (e) => seen.push(e.n))));
    expect(db.listens).toBe(1);
    await db.notify('thing_changed', '{not json');
    await pubsub.publish(changed, { id: 'x', n: 7 });
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([7, 7, 7]);
  });

  it('ends a waiting iterator at once on return() and stops delivering to it', async () => {
    const pubsub = new PubSub(fakeDb(), createLogger('silent'));
    const events = await pubsub.iterate(changed);
    const pending = events.next();
    expect(await events.return!()).toEqual({ value: undefined, done: true });
    expect(await pending).toEqual({ value: undefined, done: true });
    await pubsub.publish(changed, { id: 'a', n: 1 });
    await new Promise((r) => setTimeout(r, 10));
    expect(await events.next()).toEqual({ value: undefined, done: true });
    expect((pubsub as unknown as { local: Map<string, Set<unknown>> }).local.get('thing_changed')?.size).toBe(0);
  });
});

describe('eventStream', () => {
  it('drains queued values after end(), then cleans up once', async () => {
    let cleanups = 0;
    const stream = eventStream<number>(() => cleanups++);
    stream.push(1);
    stream.push(2);
    stream.end();
    stream.push(3);
    const values: number[] = [];
    for await (const v of stream.iterator) values.push(v);
    expect(values).toEqual([1, 2]);
    await stream.iterator.return!();
    expect(cleanups).toBe(1);
  });
});
