// A small seeded pseudo-random generator (mulberry32) for fuzz tests: the same seed gives the same cases, so a
// failure is reproduced by running again with the seed it printed.

export class Prng {
  readonly seed: number;
  #state: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#state = this.seed;
  }

  /** a float in [0, 1) */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** an integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(0, items.length - 1)]!;
  }

  bytes(length: number): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = this.int(0, 255);
    return out;
  }

  /** `length` characters drawn from `alphabet` */
  string(length: number, alphabet: string): string {
    const chars = [...alphabet];
    let out = '';
    for (let i = 0; i < length; i++) out += this.pick(chars);
    return out;
  }
}

/** FUZZ_SEED from the environment (to replay a failure or explore), else the fixed seed CI runs. */
export function fuzzSeed(fallback: number): number {
  const given = process.env.FUZZ_SEED;
  if (given === undefined || given === '') return fallback;
  const seed = Number(given);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`FUZZ_SEED must be an integer 0..2^32-1, got ${given}`);
  return seed;
}
