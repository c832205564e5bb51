import { describe, expect, it } from 'vitest';
import { CONDITION_OPS as SERVER_OPS, MATCH_LIMITS } from '../../../modules/automation/conditions.js';
import { CONDITION_OPS, MAX_CONDITIONS, conditionOf, rowNamedIn, rowOf, withOp } from './condition-rows.js';

describe("the rule form's condition rows", () => {
  it("offers the server's operators and its limit of conditions", () => {
    expect(Object.keys(CONDITION_OPS)).toEqual([...SERVER_OPS]);
    expect(MAX_CONDITIONS).toBe(MATCH_LIMITS.conditions);
  });

  it('reads typed text as numbers, booleans, null and text, and lists for in / not_in', () => {
    expect(conditionOf({ field: ' disposition ', op: 'eq', value: 'malicious' })).toEqual({ field: 'disposition', op: 'eq', value: 'malicious' });
    expect(conditionOf({ field: 'bytes', op: 'gt', value: '1e6' }).value).toBe(1_000_000);
    expect(conditionOf({ field: 'x', op: 'eq', value: '-2.5' }).value).toBe(-2.5);
    expect(conditionOf({ field: 'x', op: 'eq', value: 'true' }).value).toBe(true);
    expect(conditionOf({ field: 'x', op: 'ne', value: 'null' }).value).toBeNull();
    expect(conditionOf({ field: 'x', op: 'eq', value: '"42"' }).value).toBe('42');
    expect(conditionOf({ field: 'x', op: 'exists', value: 'false' }).value).toBe(false);
    expect(conditionOf({ field: 'x', op: 'in', value: 'malicious, escalate , 3, "a, b",' }).value).toEqual(['malicious', 'escalate', 3, 'a, b']);
    // Not a number: sent as text, for the server to refuse with its message.
    expect(conditionOf({ field: 'x', op: 'gte', value: 'lots' }).value).toBe('lots');
  });

  it('writes a saved condition back as the text that reads to it again', () => {
    const saved = [
      { field: 'a', op: 'eq', value: 'malicious' },
      { field: 'a', op: 'eq', value: '42' },
      { field: 'a', op: 'eq', value: 'true' },
      { field: 'a', op: 'eq', value: ' padded ' },
      { field: 'a', op: 'eq', value: '"quoted"' },
      { field: 'a', op: 'eq', value: null },
      { field: 'a', op: 'lte', value: 0.5 },
      { field: 'a', op: 'not_in', value: ['x', 'y, z', 7, false, null, 'say "hi"'] },
      { field: 'a', op: 'exists', value: true },
    ];
    for (const condition of saved) expect(conditionOf(rowOf(condition))).toEqual(condition);
    expect(rowOf({ field: 'a', op: 'in', value: ['malicious', 'escalate'] }).value).toBe('malicious, escalate');
  });

  it('gives exists a true or false, and names the row of a server message', () => {
    expect(withOp({ field: 'a', op: 'eq', value: 'x' }, 'exists')).toEqual({ field: 'a', op: 'exists', value: 'true' });
    expect(withOp({ field: 'a', op: 'exists', value: 'false' }, 'gt')).toEqual({ field: 'a', op: 'gt', value: '' });
    expect(rowNamedIn('match.conditions[2].value must be a number for gt')).toBe(2);
    expect(rowNamedIn('Missing required fields: match.conditions[0].field')).toBe(0);
    expect(rowNamedIn('match.topic must be one of …')).toBeUndefined();
  });
});
