// Flows by their conversation's key. The key and the hash table over it live in WebAssembly
// (wasm/flow-index.ts, which describes both); this side keeps the flows by the ids it hands the
// table, reusing the ids of removed flows, so the table holds numbers and a packet's lookup builds
// no string and allocates nothing.

import { flowKind } from './flow-key.js';
import type { PacketHeaders } from './packet.js';
import { meterWasmModule } from './wasm-module.js';

/** What the index stores: the id it gave the value, so that removal needs no key. */
export interface Indexed {
  indexId: number;
}

interface FlowIndexExports {
  configure(limit: number): void;
  size(): number;
  capacity(): number;
  homeSlot(): number;
  // prettier-ignore
  find(kind: number, vlan: number, s0: number, s1: number, s2: number, s3: number, d0: number, d1: number, d2: number, d3: number, srcPort: number, dstPort: number): number;
  insert(id: number): void;
  remove(id: number): void;
}

export class FlowIndex<T extends Indexed> {
  /**
   * Whether the sender of the latest find()'s packet is the lower end of the key; compared with
   * the flow's first answer, it tells the packet's direction.
   */
  senderFirst = false;
  private readonly table: FlowIndexExports;
  private readonly byId: (T | undefined)[] = [];
  private readonly freeIds: number[] = [];

  /** An index of at most `maxSize` flows: the table reserves 4 bytes per flow of it for the ids. */
  constructor(readonly maxSize: number) {
    if (!Number.isInteger(maxSize) || maxSize < 1 || maxSize > 2 ** 28) throw new RangeError(`a flow index holds 1 to 2^28 flows, not ${maxSize}`);
    this.table = new WebAssembly.Instance(meterWasmModule()).exports as unknown as FlowIndexExports;
    this.table.configure(maxSize);
  }

  get size(): number {
    return this.table.size();
  }

  get capacity(): number {
    return this.table.capacity();
  }

  /** The flow of the packet's conversation; sets `senderFirst`. */
  find(h: PacketHeaders): T | undefined {
    const a = h.addresses;
    const found = this.table.find(flowKind(h), h.vlan + 1, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], h.srcPort, h.dstPort);
    this.senderFirst = (found & 1) !== 0;
    return found < 2 ? undefined : this.byId[(found >>> 1) - 1];
  }

  /** The slot where the latest find()'s probe started (its key's home). */
  homeSlot(): number {
    return this.table.homeSlot();
  }

  /** Adds a value under the key of the latest find(), which found nothing; removals in between are fine. */
  insert(value: T): void {
    if (this.size >= this.maxSize) throw new RangeError(`the flow index is full (${this.maxSize} flows)`);
    const id = this.freeIds.pop() ?? this.byId.length;
    this.table.insert(id);
    this.byId[id] = value;
    value.indexId = id;
  }

  /** Removes a value the index holds. */
  remove(value: T): void {
    const id = value.indexId;
    if (this.byId[id] !== value) throw new Error('removing a flow the index does not hold');
    this.table.remove(id);
    this.byId[id] = undefined;
    this.freeIds.push(id);
    value.indexId = -1;
  }
}
