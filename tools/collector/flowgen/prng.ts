// A seeded PRNG (sfc32) with the few distributions the generator needs.
// Math.random is never used: every value must follow from the seed so that
// the same seed and options give byte-identical output.

/** 32-bit FNV-1a followed by a murmur finaliser: cheap, stable string → uint32. */
export function hashString(text: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** Murmur3 finaliser: spreads every input bit over the output. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

export type Seed = number | string;

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal = 0;
  private hasSpare = false;

  constructor(readonly seedText: string) {
    this.a = hashString(seedText, 1);
    this.b = hashString(seedText, 2);
    this.c = hashString(seedText, 3);
    this.d = hashString(seedText, 4);
    // sfc32 needs a few rounds before its output looks uniform.
    for (let i = 0; i < 15; i++) this.nextUint32();
  }

  static from(seed: Seed): Prng {
    return new Prng(String(seed));
  }

  /** An independent stream: a scenario never shifts the benign stream, and vice versa. */
  fork(label: string): Prng {
    return new Prng(`${this.seedText}/${label}`);
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi] inclusive. */
  intBetween(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  between(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  normal(): number {
    if (this.hasSpare) {
      this.hasSpare = false;
      return this.spareNormal;
    }
    // Box–Muller; 1 - next() keeps log away from 0.
    const u = 1 - this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    this.hasSpare = true;
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal parameterised by its median, which is how traffic sizes are usually quoted. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }
}

/**
 * Weighted choice by cumulative weights and binary search: O(log n) per draw,
 * built once per table (orgs, hosts, traffic classes).
 */
export class WeightedTable<T> {
  private readonly cumulative: Float64Array;
  readonly total: number;

  constructor(
    readonly items: readonly T[],
    weights: readonly number[],
  ) {
    if (items.length === 0 || items.length !== weights.length) {
      throw new Error('WeightedTable needs one positive weight per item');
    }
    this.cumulative = new Float64Array(items.length);
    let sum = 0;
    for (let i = 0; i < weights.length; i++) {
      sum += Math.max(0, weights[i]);
      this.cumulative[i] = sum;
    }
    if (!(sum > 0)) throw new Error('WeightedTable needs a positive total weight');
    this.total = sum;
  }

  pick(rng: Prng): T {
    return this.items[this.index(rng.next() * this.total)];
  }

  private index(target: number): number {
    const c = this.cumulative;
    let lo = 0;
    let hi = c.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (c[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Zipf weights 1/rank^s: a few destinations dominate, a long tail stays visible. */
export function zipfWeights(n: number, exponent: number): number[] {
  const weights: number[] = [];
  for (let rank = 1; rank <= n; rank++) weights.push(1 / Math.pow(rank, exponent));
  return weights;
}
