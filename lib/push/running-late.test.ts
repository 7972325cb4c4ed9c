import { describe, expect, it } from 'vitest';
import type { TrackingRecord } from '../schemas/index.ts';
import { lateProbabilityOf, runningLateOf, type LateState } from './running-late.ts';

/** A record as the rule reads it: its prediction (null: terminal or no basis), EDD probability and promise. */
function recordWith(prediction: { edd: number | null; promise?: [string, number] } | null): TrackingRecord {
  return {
    insights: {
      prediction: prediction === null ? null : {
        delivery_date: '2026-11-24',
        window: { p80: ['2026-11-23', '2026-11-25'], p90: ['2026-11-23', '2026-11-26'] },
        on_time_probability: prediction.edd,
        basis: { level: 'lane', sample_size: 40, stage: 'in_transit', model_at: '2026-11-20T00:00:00.000Z' },
        ...(prediction.promise ? { promise: { promised_by: prediction.promise[0], on_time_probability: prediction.promise[1] } } : {}),
      },
    },
  } as unknown as TrackingRecord;
}

/** The rule over a run of records: what it tells at each. */
function run(records: TrackingRecord[], promisedBy: string | null, threshold = 0.5): (number | null)[] {
  let state: LateState = {};
  return records.map((r) => {
    const step = runningLateOf(state, r, promisedBy, threshold);
    state = step.next;
    return step.late?.on_time_probability ?? null;
  });
}

describe('tracking.running_late (the rule)', () => {
  it('tells once when the promise’s probability falls below the threshold, not on repeats, again only after it recovered', () => {
    const p = (x: number) => recordWith({ edd: 0.9, promise: ['2026-11-23', x] });
    expect(run([p(0.8), p(0.49), p(0.3), p(0.2), p(0.5), p(0.45), p(0.45), p(0.9)], '2026-11-23')).toEqual([null, 0.49, null, null, null, 0.45, null, null]);
    const first = runningLateOf({}, p(0.2), '2026-11-23', 0.5);
    expect(first.late).toEqual({ promised_by: '2026-11-23', on_time_probability: 0.2, delivery_date: '2026-11-24' });
  });

  it('without a promise it reads the carrier EDD’s probability; without an EDD nothing moves', () => {
    const edd = (x: number | null) => recordWith({ edd: x });
    expect(run([edd(0.7), edd(0.4), edd(null), edd(0.3), edd(0.6), edd(0.1)], null)).toEqual([null, 0.4, null, null, null, 0.1]);
    expect(runningLateOf({}, edd(0.1), null, 0.5).late).toEqual({ promised_by: null, on_time_probability: 0.1, delivery_date: '2026-11-24' });
  });

  it('never once the shipment stopped moving (no prediction: delivered, returning, cancelled); the state is kept as it was', () => {
    expect(runningLateOf({ late_told: false }, recordWith(null), null, 0.5)).toEqual({ late: null, next: { late_told: false } });
    expect(runningLateOf({ late_told: true }, recordWith(null), '2026-11-23', 0.5)).toEqual({ late: null, next: { late_told: true } });
  });

  it('the threshold is the watch’s: 0 never tells, 1 tells below certainty; a record’s promise of another day is not read', () => {
    const p = (x: number) => recordWith({ edd: 0.9, promise: ['2026-11-23', x] });
    expect(run([p(0), p(0.1)], '2026-11-23', 0)).toEqual([null, null]);
    expect(run([p(0.99)], '2026-11-23', 1)).toEqual([0.99]);
    expect(lateProbabilityOf(p(0.1), '2026-11-30')).toBeNull();
    // With a promise, the EDD's probability is not what counts.
    expect(run([recordWith({ edd: 0.1, promise: ['2026-11-23', 0.9] })], '2026-11-23')).toEqual([null]);
  });
});
