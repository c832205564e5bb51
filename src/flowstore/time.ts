/**
 * DateTimeFilter (wire.md 5.2) and the ISO dates it carries, resolved to epoch milliseconds.
 */
import { FlowQueryError } from './errors.js';

export type RelativeUnit = 'minutes' | 'hours' | 'days' | 'weeks';

export type DateTimeFilter = { now: true } | { relative: { value: number; unit: RelativeUnit } } | { absolute: { date: string } };

const UNIT_MS: Record<RelativeUnit, number> = {
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 7 * 86_400_000,
};
export const RELATIVE_UNITS = Object.keys(UNIT_MS) as RelativeUnit[];

/**
 * The instants a date-time may name: four-digit years from 0001 (PostgreSQL has no year 0000)
 * to 9999-12-31T23:59:59.999Z. A time outside (epoch milliseconds in a sentence, a relative start
 * of a billion days) is refused: the engines bind Int64 parameters exactly or not at all.
 */
export const EARLIEST_MS = -62_135_596_800_000;
export const LATEST_MS = 253_402_300_799_999;

export const isRepresentableMs = (ms: number) => Number.isInteger(ms) && ms >= EARLIEST_MS && ms <= LATEST_MS;

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Epoch milliseconds for an ISO 8601 date-time: `2025-01-15T12:30:00Z`, `...+02:00`, `...+0200`,
 * zone-less (taken as UTC, as the SDK sends naive Python datetimes), with or without fractions
 * (truncated to milliseconds), or a bare date (midnight UTC). Null when it is not one.
 */
export function parseIsoDate(text: string): number | null {
  const m = ISO_RE.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const ms = Number((frac + '000').slice(0, 3));
  let offsetMinutes = 0;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || '0');
    if (oh > 23 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear undoes that.
  const fixed = year < 100 ? new Date(utc).setUTCFullYear(year) : utc;
  return fixed - offsetMinutes * 60_000;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Resolves a DateTimeFilter to epoch ms; `field` names it in validation errors (`start`, `end`). */
export function resolveDateTimeFilter(input: unknown, field: string, nowMs: number): number {
  if (!isObject(input)) throw new FlowQueryError(field, `${field} must be an object with one of now, relative, absolute`);
  const forms = ['now', 'relative', 'absolute'].filter((k) => input[k] !== undefined && input[k] !== null);
  if (forms.length !== 1) {
    throw new FlowQueryError(field, `${field} must have exactly one of now, relative, absolute`);
  }
  const form = forms[0];
  if (form === 'now') {
    if (input.now !== true) throw new FlowQueryError(`${field}.now`, `${field}.now must be true`);
    return nowMs;
  }
  if (form === 'relative') {
    const rel = input.relative;
    if (!isObject(rel)) throw new FlowQueryError(`${field}.relative`, `${field}.relative must be an object {value, unit}`);
    const { value, unit } = rel;
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw new FlowQueryError(`${field}.relative.value`, `${field}.relative.value must be a positive integer`);
    }
    if (typeof unit !== 'string' || !Object.hasOwn(UNIT_MS, unit)) {
      throw new FlowQueryError(`${field}.relative.unit`, `${field}.relative.unit must be one of minutes, hours, days, weeks`);
    }
    const ms = nowMs - value * UNIT_MS[unit as RelativeUnit];
    if (!isRepresentableMs(ms)) {
      throw new FlowQueryError(`${field}.relative.value`, `${field}.relative.value reaches before year 0001`);
    }
    return ms;
  }
  const abs = input.absolute;
  if (!isObject(abs) || typeof abs.date !== 'string') {
    throw new FlowQueryError(`${field}.absolute.date`, `${field}.absolute.date must be an ISO 8601 string`);
  }
  const ms = parseIsoDate(abs.date);
  if (ms === null) {
    throw new FlowQueryError(`${field}.absolute.date`, `${field}.absolute.date is not a valid ISO 8601 date-time: '${abs.date}'`);
  }
  return ms;
}
