import { describe, expect, it } from 'vitest';
import { giveBack, lend } from './lent-bytes.js';
import { RawJson, serializeJson } from './raw-json.js';

const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString('utf8');
const raw = (s: string) => new RawJson([Buffer.from(s)]);

describe('raw JSON', () => {
  it('splices raw values into the envelope as the bytes they are', () => {
    const flows = new RawJson([Buffer.from('['), Buffer.from('{"a":1},{"b":"x/y"}'), Buffer.from(']')]);
    const { chunks } = serializeJson({ c1: { flows, found: 2 }, c2: { flows: raw('[]'), found: 0 } });
    expect(text(chunks)).toBe('{"c1":{"flows":[{"a":1},{"b":"x/y"}],"found":2},"c2":{"flows":[],"found":0}}');
    expect(chunks).toContain(flows.chunks[1]);
  });

  it('never takes a string of the data for a raw value', () => {
    const lookalike = `"${'0'.repeat(24)}:0"`;
    const out = JSON.parse(text(serializeJson({ s: lookalike, t: '\u0000raw:0', r: raw('{"ok":true}') }).chunks));
    expect(out).toEqual({ s: lookalike, t: '\u0000raw:0', r: { ok: true } });
  });

  it('is an ordinary value to anything else that serializes it', () => {
    expect(JSON.stringify({ r: raw('[1,2]') })).toBe('{"r":[1,2]}');
    expect(raw('{"a":[1]}').parse()).toEqual({ a: [1] });
    expect(text(serializeJson({ plain: [1, 'two'] }).chunks)).toBe('{"plain":[1,"two"]}');
  });

  it('gives back the lent memory of its raw values once, whichever view holds it', () => {
    const memory = new Uint8Array(new SharedArrayBuffer(16));
    memory.set(Buffer.from('[1],[2]'));
    let givenBack = 0;
    lend(memory, () => givenBack++);
    const page = new RawJson([Buffer.from('['), memory.subarray(1, 2), Buffer.from(','), memory.subarray(5, 6), Buffer.from(']')]);
    const serialized = serializeJson({ flows: page });
    expect(text(serialized.chunks)).toBe('{"flows":[1,2]}');
    expect(givenBack).toBe(0);
    serialized.release();
    serialized.release();
    giveBack(memory);
    expect(givenBack).toBe(1);
    giveBack(Buffer.from('never lent'));
  });
});
