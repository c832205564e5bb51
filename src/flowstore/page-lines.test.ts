import { describe, expect, it } from 'vitest';
import { pageFromCommaRows, pagesFromLines } from './page-lines.js';

const lines = (...l: string[]) => Buffer.from(l.join('\n') + '\n');
const plain = (p: { flows: { parse(): unknown }; total: number; found: number }) => ({ flows: p.flows.parse(), total: p.total, found: p.found });
const readOne = (rows: string) => plain(pageFromCommaRows(Buffer.from(rows)));
const read = (buf: Buffer, ids: string[]) => Object.fromEntries([...pagesFromLines(buf, ids)].map(([id, p]) => [id, plain(p)]));

describe('records query rows', () => {
  it('reads one instance with its count row anywhere among the comma-joined records', () => {
    const records = ['{"a":1,"b":[1,2]}', '{"a":2,"s":"x,\\ty"}', '{"a":3}'];
    const expected = { flows: [{ a: 1, b: [1, 2] }, { a: 2, s: 'x,\ty' }, { a: 3 }], total: 10, found: 5 };
    for (let at = 0; at <= records.length; at++) {
      const rows = [...records];
      rows.splice(at, 0, '\t10\t5');
      expect(readOne(rows.join(','))).toEqual(expected);
    }
  });

  it('reads one instance with counts and no records, or nothing at all, as an empty page', () => {
    expect(readOne('\t7\t0')).toEqual({ flows: [], total: 7, found: 0 });
    expect(readOne('')).toEqual({ flows: [], total: 0, found: 0 });
    expect(readOne('{"a":1},\t7\t1')).toEqual({ flows: [{ a: 1 }], total: 7, found: 1 });
    expect(readOne('\t7\t1,{"a":1}')).toEqual({ flows: [{ a: 1 }], total: 7, found: 1 });
  });

  it('reads several instances a line each, counts and records interleaved, and ignores instances not asked for', () => {
    const buf = lines('c2\t{"b":1}', '\tc1\t4\t2', 'c1\t{"a":1}', '\tc2\t9\t1', 'c1\t{"a":2}', '\tzz\t1\t1', 'zz\t{"z":1}');
    expect(read(buf, ['c1', 'c2', 'c3'])).toEqual({
      c1: { flows: [{ a: 1 }, { a: 2 }], total: 4, found: 2 },
      c2: { flows: [{ b: 1 }], total: 9, found: 1 },
      c3: { flows: [], total: 0, found: 0 },
    });
    expect(read(Buffer.alloc(0), ['c1', 'c2'])).toEqual({ c1: { flows: [], total: 0, found: 0 }, c2: { flows: [], total: 0, found: 0 } });
  });
});
