/**
 * mulberry32: a small seeded PRNG, for sequences that must repeat exactly for the same seed, which
 * Math.random cannot do: the sandbox's journeys, shuffles and injected errors, the parser fuzz tests
 * and the tests' generated shipments. Its numbers are part of what those produce: do not change it.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
