// Flows in order of their last packet, oldest first, in O(1) per packet: the idle scan reads
// from the old end and stops at the first flow still active. (A Map re-inserted on every packet
// keeps the same order, but its deleted slots pile up in front of the first live entry, and
// every scan pays for them until the next rehash.)

export interface RecencyNode<T> {
  older: T | undefined;
  newer: T | undefined;
}

export class RecencyList<T extends RecencyNode<T>> {
  oldest: T | undefined;
  private newest: T | undefined;

  /** Puts the node at the new end, whether or not it was in the list. */
  touch(node: T): void {
    if (this.newest === node) return;
    if (node.older !== undefined || this.oldest === node) this.remove(node);
    node.older = this.newest;
    node.newer = undefined;
    if (this.newest !== undefined) this.newest.newer = node;
    else this.oldest = node;
    this.newest = node;
  }

  remove(node: T): void {
    if (node.older !== undefined) node.older.newer = node.newer;
    else this.oldest = node.newer;
    if (node.newer !== undefined) node.newer.older = node.older;
    else this.newest = node.older;
    node.older = undefined;
    node.newer = undefined;
  }

  clear(): void {
    this.oldest = undefined;
    this.newest = undefined;
  }
}
