import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { giveBack } from '../infra/lent-bytes.js';
import { ChdbThreadEngine } from './chdb-thread.js';
import { FlowEngineError } from './errors.js';
import { named } from './sql.js';
import { defineFlowStoreSuite } from './testkit/engine-suite.js';
import { threadStates } from './testkit/threads.js';

defineFlowStoreSuite('chDB on a worker thread', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'flowstore-chdb-thread-'));
  const engine = await ChdbThreadEngine.open(dir);
  return {
    engine,
    async close() {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('ChdbThreadEngine', () => {
  it('keeps ClickHouse error codes across the thread and refuses calls once closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowstore-chdb-thread-'));
    const engine = await ChdbThreadEngine.open(dir);
    try {
      const failure = await engine.query(named('flowstore:test.bad', 'SELECT no_such_column'), {}).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(FlowEngineError);
      expect((failure as FlowEngineError).clickhouseCode).toBe(47); // UNKNOWN_IDENTIFIER
      expect((failure as FlowEngineError).queryName).toBe('flowstore:test.bad');

      const lines = await engine.queryLines(named('flowstore:test.lines', "SELECT concat('a\\t', toString(number)) FROM numbers(3)"), {});
      expect(lines.toString('utf8')).toBe('a\t0\na\t1\na\t2\n');
      expect(await engine.query(named('flowstore:test.bound', 'SELECT {n:UInt8} + 1 AS n'), { n: 41 })).toEqual([{ n: 42 }]);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
    await expect(engine.query(named('flowstore:test.after', 'SELECT 1'), {})).rejects.toThrow(/closed/);
    expect(await engine.ping()).toBe(false);
  });

  it('lends big results in shared memory, reused only once given back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowstore-chdb-thread-'));
    const engine = await ChdbThreadEngine.open(dir);
    // 200,000 lines of 31 bytes: 6.2 MB, a slab result.
    const lines = (c: string) => engine.queryLines(named('flowstore:test.big', `SELECT repeat({c:String}, 30) FROM numbers(200000)`), { c });
    try {
      const a = await lines('a');
      expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
      const b = await lines('b');
      expect([a[0], a[a.length - 2], b[0]]).toEqual([0x61, 0x61, 0x62]); // a still lent: b went elsewhere
      giveBack(a);
      giveBack(b);
      const c = await lines('c');
      expect([c[0], c.length]).toEqual([0x63, 200_000 * 31]);
      expect(a[0] === 0x63 || b[0] === 0x63).toBe(true); // c reuses memory given back
      const small = await engine.queryLines(named('flowstore:test.small', 'SELECT 1'), {});
      expect(small.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(process.platform === 'linux')('runs at the lowest priority on its own thread, the main thread untouched', async () => {
    const niceValues = () => new Map([...threadStates()].map(([task, t]) => [task, t.nice]));
    const before = niceValues();
    const dir = mkdtempSync(join(tmpdir(), 'flowstore-chdb-thread-'));
    const engine = await ChdbThreadEngine.open(dir);
    try {
      const after = niceValues();
      expect(after.get(process.pid)).toBe(before.get(process.pid));
      expect([...after].filter(([task, nice]) => !before.has(task) && nice === 19)).not.toHaveLength(0);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
