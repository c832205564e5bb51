import { describe, expect, it } from 'vitest';
import { pagesFromLines } from './page-lines.js';

const lines = (...l: string[]) => Buffer.from(l.join('\n') + '\n');
const read = (buf: Buffer, ids: string[]) =>
  Object.fromEntries([...pagesFromLines(buf, ids)].map(([id, p]) => [id, { flows: p.flows.parse(), count: p.count, total: p.total, found: p.found }]));

describe('records query lines', () => {
  it('reads one instance with its count line anywhere among the records', () => {
    const records = ['{"a":1}', '{"a":2}', '{"a":3}'];
    const expected = { c1: { flows: [{ a: 1 }, { a: 2 }, { a: 3 }], count: 3, total: 10, found: 5 } };
    for (let at = 0; at <= records.length; at++) {
      const l = [...records];
      l.splice(at, 0, '\tc1\t10\t5');
      expect(read(lines(...l), ['c1'])).toEqual(expected);
    }
  });

  it('reads counts without records, and nothing at all, as empty pages', () => {
    expect(read(lines('\tc1\t7\t0'), ['c1'])).toEqual({ c1: { flows: [], count: 0, total: 7, found: 0 } });
    expect(read(Buffer.alloc(0), ['c1', 'c2'])).toEqual({ c1: { flows: [], count: 0, total: 0, found: 0 }, c2: { flows: [], count: 0, total: 0, found: 0 } });
    expect(read(Buffer.alloc(0), ['c1'])).toEqual({ c1: { flows: [], count: 0, total: 0, found: 0 } });
    expect(read(lines('{"a":1}', '\tc1\t7\t1'), ['c1'])).toEqual({ c1: { flows: [{ a: 1 }], count: 1, total: 7, found: 1 } });
  });

  it('reads several instances, counts and records interleaved, and ignores instances not asked for', () => {
    const buf = lines('c2\t{"b":1}', '\tc1\t4\t2', 'c1\t{"a":1}', '\tc2\t9\t1', 'c1\t{"a":2}', '\tzz\t1\t1', 'zz\t{"z":1}');
    expect(read(buf, ['c1', 'c2', 'c3'])).toEqual({
      c1: { flows: [{ a: 1 }, { a: 2 }], count: 2, total: 4, found: 2 },
      c2: { flows: [{ b: 1 }], count: 1, total: 9, found: 1 },
      c3: { flows: [], count: 0, total: 0, found: 0 },
    });
  });
});
