/** Seeded randomness for property and fuzz tests: the same calls on every run. */

/** A small seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rand = () => number;

export function pick<T>(r: Rand, list: readonly T[]): T {
  return list[Math.floor(r() * list.length)]!;
}

/** An integer in [0, n). */
export function int(r: Rand, n: number): number {
  return Math.floor(r() * n);
}
