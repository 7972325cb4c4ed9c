/**
 * Known answers: the sandbox's journeys, the generated test shipments and the delivery model's seeds
 * are drawn from these numbers, so they may never change (values of the copies these replaced).
 */
import { describe, expect, it } from 'vitest';
import { fnv1a32 } from './fnv1a.ts';
import { seededRandom } from './seeded-random.ts';

describe('seededRandom (mulberry32)', () => {
  it('gives the same sequence for a seed as ever', () => {
    const r = seededRandom(42);
    expect([r(), r(), r()]).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
    const zero = seededRandom(0);
    expect([zero(), zero()]).toEqual([0.26642920868471265, 0.0003297457005828619]);
  });
});

describe('fnv1a32', () => {
  it('is 32-bit FNV-1a', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('delhivery:1234567890102')).toBe(3552803577);
  });
});
