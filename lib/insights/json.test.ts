import { describe, expect, it } from 'vitest';
import { normalized } from '../testing/product.ts';
import { JOURNEYS, journeyPoll } from '../testing/polls.ts';
import { toTrackingRecord } from './index.ts';
import { trackingRecordJson } from './json.ts';

const lane = { lane: 'delhivery:110:560', median_transit_days: 3.2, sample_size: 31 };

describe('trackingRecordJson', () => {
  it.each(Object.keys(JOURNEYS))('writes exactly what JSON.stringify writes (%s, every flag, with and without a lane)', (carrier) => {
    const { record, facts } = normalized(journeyPoll(carrier, 7));
    for (const [cached, stale] of [[false, false], [true, false], [true, true]] as const) {
      for (const benchmark of [null, lane]) {
        const full = toTrackingRecord(record, facts, { nowMs: Date.UTC(2026, 10, 21), lane: benchmark, cached, stale });
        expect(trackingRecordJson(full, record)).toBe(JSON.stringify(full));
      }
    }
  });

  it('reuses the base text per base record, never across records', () => {
    const a = normalized(journeyPoll('delhivery', 1));
    const b = normalized(journeyPoll('delhivery', 2));
    const answer = (s: typeof a, nowMs: number) => toTrackingRecord(s.record, s.facts, { nowMs, lane: null, cached: true, stale: false });
    const first = answer(a, Date.UTC(2026, 10, 21));
    const later = answer(a, Date.UTC(2026, 10, 25));
    const other = answer(b, Date.UTC(2026, 10, 21));
    expect(trackingRecordJson(first, a.record)).toBe(JSON.stringify(first));
    expect(trackingRecordJson(later, a.record)).toBe(JSON.stringify(later));
    expect(trackingRecordJson(other, b.record)).toBe(JSON.stringify(other));
  });
});
