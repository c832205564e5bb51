import type { FlowRecord } from './types.js';

/** A time-ordered stream of flows; the generator merges several of them. */
export interface FlowSource {
  /** @timestamp of the next flow (integer epoch ms), or Infinity when the source is done. */
  peek(): number;
  /** The next flow; only called after peek() returned a finite time. */
  emit(): FlowRecord;
}
