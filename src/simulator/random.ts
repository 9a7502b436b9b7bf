/**
 * A small seeded pseudo-random generator (mulberry32), so that generated edges and rate-based
 * faults are the same on every run with the same seed. Not for anything that needs secrecy.
 */

export interface Random {
  /** a number in [0, 1) */
  next(): number;
  /** an integer in [min, max], both inclusive */
  int(min: number, max: number): number;
  /** one element of a non-empty list */
  pick<T>(items: readonly T[]): T;
}

export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick<T>(items: readonly T[]): T {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError("pick from an empty list");
      return item;
    },
  };
}
