/**
 * The sandbox's two text hashes. They are not the same function, and both stay as they are: every
 * sandbox journey, scenario time and shuffle is drawn from them, so changing either would change
 * what the sandbox answers for a number (and the histories and tests built on those answers).
 *
 * Both are FNV-1a followed by MurmurHash3's 32-bit finaliser (fmix32), which spreads neighbouring
 * numbers over unrelated values; the scenario engine's runs the whole finaliser, the network
 * numbers' stops after its first multiply (an early copy that lost two lines, kept for its numbers).
 */
import { fnv1a32 } from '../random/fnv1a.ts';

/** FNV-1a, then the whole fmix32 (scenario.ts: scenario times, shuffles, service, weight). */
export function fnv1aFmix32(text: string): number {
  let h = fnv1a32(text);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a, then fmix32 up to its first multiply and shift only (network-numbers.ts: the journeys of SS 27-49). */
export function fnv1aHalfFmix32(text: string): number {
  let h = fnv1a32(text);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}
