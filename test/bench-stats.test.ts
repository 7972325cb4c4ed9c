import { describe, expect, it } from 'vitest';
import { mean, percentile, round } from '../bench/stats.ts';

describe('bench stats', () => {
  it('percentile is the nearest rank: at least p % of the values at or below it', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile([3, 7], 50)).toBe(3);
    expect(percentile([3, 7], 51)).toBe(7);
    expect(percentile([5], 0)).toBe(5);
    expect(percentile([], 50)).toBeNaN();
  });

  it('round keeps the digits asked for; mean averages', () => {
    expect(round(1234.5678)).toBe(1235);
    expect(round(1234.5678, 2)).toBe(1234.57);
    expect(round(0.125, 1)).toBe(0.1);
    expect(mean([1, 2, 6])).toBe(3);
  });
});
