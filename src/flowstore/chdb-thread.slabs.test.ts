import { describe, expect, it } from 'vitest';
import { MAX_SLAB_BYTES, MIN_SLAB_RESULT_BYTES, SlabPool } from './chdb-thread.slabs.js';

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

describe('SlabPool', () => {
  it('places big results only, and reuses a slab once its placement is freed', () => {
    const pool = new SlabPool();
    expect(pool.place(bytes(MIN_SLAB_RESULT_BYTES - 1))).toBeUndefined();
    const first = pool.place(bytes(MIN_SLAB_RESULT_BYTES, 7))!;
    expect(new Uint8Array(first.memory, 0, first.length).every((b) => b === 7)).toBe(true);
    const second = pool.place(bytes(MIN_SLAB_RESULT_BYTES, 8))!;
    expect(second.slab).not.toBe(first.slab);
    pool.free(first.slab, first.use);
    const third = pool.place(bytes(MIN_SLAB_RESULT_BYTES, 9))!;
    expect(third).toMatchObject({ slab: first.slab, memory: first.memory });
    expect(third.use).not.toBe(first.use);
  });

  it('sizes a slab to its first result: doubling from 1 MB, then in steps of 16 MB', () => {
    const pool = new SlabPool();
    const MB = 1024 * 1024;
    const sizeFor = (n: number) => pool.place(bytes(n))!.memory.byteLength;
    expect(sizeFor(250 * 1024)).toBe(MB);
    expect(sizeFor(MB + 1)).toBe(2 * MB);
    expect(sizeFor(16 * MB)).toBe(16 * MB);
    expect(sizeFor(63 * MB)).toBe(64 * MB);
  });

  it('keeps a small result out of a free slab far bigger than it needs', () => {
    const pool = new SlabPool();
    const MB = 1024 * 1024;
    const big = pool.place(bytes(60 * MB))!;
    pool.free(big.slab, big.use);
    const small = pool.place(bytes(250 * 1024))!;
    expect(small.slab).not.toBe(big.slab);
    expect(small.memory.byteLength).toBe(MB);
    expect(pool.place(bytes(50 * MB))!.slab).toBe(big.slab);
  });

  it('ignores a late free of an earlier placement', () => {
    const pool = new SlabPool();
    const first = pool.place(bytes(MIN_SLAB_RESULT_BYTES))!;
    pool.free(first.slab, first.use);
    const again = pool.place(bytes(MIN_SLAB_RESULT_BYTES))!;
    pool.free(first.slab, first.use);
    expect(pool.place(bytes(MIN_SLAB_RESULT_BYTES))!.slab).not.toBe(again.slab);
  });

  it('stays under its cap (past it results are transferred) and drops slabs left idle', () => {
    let now = 0;
    const pool = new SlabPool(() => now);
    const placed = [];
    for (let r = pool.place(bytes(MIN_SLAB_RESULT_BYTES)); r; r = pool.place(bytes(MIN_SLAB_RESULT_BYTES))) placed.push(r);
    expect(pool.totalBytes()).toBeLessThanOrEqual(MAX_SLAB_BYTES);
    expect(placed.length).toBeGreaterThan(1);
    for (const p of placed) pool.free(p.slab, p.use);
    now += 60_000;
    pool.place(bytes(MIN_SLAB_RESULT_BYTES));
    expect(pool.totalBytes()).toBeLessThan(2 * placed[0]!.memory.byteLength);
  });
});
