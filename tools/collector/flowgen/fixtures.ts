// Shared options for the flowgen tests: fixed instants, so every run is reproducible.

import type { FlowGeneratorOptions } from './options.js';

const HOUR = 3_600_000;

/** Tuesday 2025-01-14 10:00 in New York (the default site, UTC−5). */
export const TUESDAY_10AM = Date.UTC(2025, 0, 14, 15);
/** Tuesday 2025-01-14 00:00 in New York. */
export const TUESDAY_MIDNIGHT = Date.UTC(2025, 0, 14, 5);

export type BoundedOptions = FlowGeneratorOptions & { endMs: number };

export function hoursFrom(startMs: number, hours: number): { startMs: number; endMs: number } {
  return { startMs, endMs: startMs + Math.round(hours * HOUR) };
}

export const BASE: BoundedOptions = {
  seed: 'flowgen-test',
  customerId: 'cust-test',
  flowsPerSecond: 10,
  ...hoursFrom(TUESDAY_10AM, 1),
};
