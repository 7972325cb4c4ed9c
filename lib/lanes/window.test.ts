import { describe, expect, it } from 'vitest';
import { compareLanes } from './compare.ts';
import { p50OfSorted, p90OfSorted, type WindowedLaneStats } from './window.ts';

describe('percentiles', () => {
  it('p50 is the middle value or the mean of the middle two; p90 interpolates at rank 0.9(n-1)', () => {
    expect(p50OfSorted([1])).toBe(1);
    expect(p50OfSorted([1, 2])).toBe(1.5);
    expect(p50OfSorted([1, 2, 10])).toBe(2);
    expect(p90OfSorted([7])).toBe(7);
    expect(p90OfSorted([1, 2])).toBeCloseTo(1.9, 15); // rank 0.9
    const ten = Array.from({ length: 10 }, (_, i) => i + 1); // rank 8.1 → 9 + 0.1
    expect(p90OfSorted(ten)).toBeCloseTo(9.1, 15);
    const eleven = Array.from({ length: 11 }, (_, i) => i * 2); // rank 9 exactly → x[9] = 18
    expect(p90OfSorted(eleven)).toBe(18);
  });
});

const lane = (carrier: string, sample: number, p50: number | null, onTime: number | null): WindowedLaneStats => ({
  lane: `${carrier}:110:560`, carrier, origin_prefix: '110', destination_prefix: '560', mode: 'live', window_days: 90,
  closed: sample, sample_size: sample, p50_transit_days: p50, p90_transit_days: p50 === null ? null : p50 * 2,
  on_time_rate: onTime, first_attempt_rate: 0.9, rto_rate: 0.05, failed_attempts: 2, ndr_reasons: [{ reason: 'refused', share: 1 }],
});

describe('compareLanes', () => {
  it('hides figures under 30 samples and picks the fastest and most reliable among the rest', () => {
    const answer = compareLanes('110', '560', 90, [lane('xpressbees', 40, 3, 0.7), lane('delhivery', 50, 2.5, 0.6), lane('dtdc', 10, 1, 0.99)]);
    expect(answer.carriers.map((c) => c.carrier)).toEqual(['delhivery', 'dtdc', 'xpressbees']);
    expect(answer.carriers[1]).toEqual({ carrier: 'dtdc', sample_size: 10, p50_transit_days: null, p90_transit_days: null, on_time_rate: null, first_attempt_rate: null, rto_rate: null, ndr_reasons: null });
    expect(answer.carriers[0]!.ndr_reasons).toEqual({ refused: 1 });
    expect(answer).toMatchObject({ fastest: 'delhivery', most_reliable: 'xpressbees', window_days: 90 });
    expect(compareLanes('110', '560', 90, [lane('dtdc', 10, 1, 1)])).toMatchObject({ fastest: null, most_reliable: null });
  });
});
