import { describe, expect, it } from 'vitest';
import { RawJson, serializeJson } from './raw-json.js';

const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString('utf8');
const raw = (s: string) => new RawJson([Buffer.from(s)]);

describe('raw JSON', () => {
  it('splices raw values into the envelope as the bytes they are', () => {
    const flows = new RawJson([Buffer.from('['), Buffer.from('{"a":1},{"b":"x/y"}'), Buffer.from(']')]);
    const chunks = serializeJson({ c1: { flows, found: 2 }, c2: { flows: raw('[]'), found: 0 } });
    expect(text(chunks)).toBe('{"c1":{"flows":[{"a":1},{"b":"x/y"}],"found":2},"c2":{"flows":[],"found":0}}');
    expect(chunks).toContain(flows.chunks[1]);
  });

  it('never takes a string of the data for a raw value', () => {
    const lookalike = `"${'0'.repeat(24)}:0"`;
    const out = JSON.parse(text(serializeJson({ s: lookalike, t: '\u0000raw:0', r: raw('{"ok":true}') })));
    expect(out).toEqual({ s: lookalike, t: '\u0000raw:0', r: { ok: true } });
  });

  it('is an ordinary value to anything else that serializes it', () => {
    expect(JSON.stringify({ r: raw('[1,2]') })).toBe('{"r":[1,2]}');
    expect(raw('{"a":[1]}').parse()).toEqual({ a: [1] });
    expect(text(serializeJson({ plain: [1, 'two'] }))).toBe('{"plain":[1,"two"]}');
  });
});
