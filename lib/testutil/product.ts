/** The real product configuration, loaded once per test file. */
import { expect } from 'vitest';
import { toTrackingRecord } from '../insights/index.ts';
import { normalizePoll, type NormalizedShipment } from '../normalize/index.ts';
import { loadProduct } from '../product/index.ts';
import { TrackingRecordSchema, type CarrierPoll, type TrackingRecord } from '../schemas/index.ts';

export const product = loadProduct();

/** Normalizes a poll that must yield a shipment. */
export function normalized(poll: CarrierPoll): NormalizedShipment {
  const result = normalizePoll(poll, product.rules);
  if (result.kind !== 'found') throw new Error(`expected a shipment, got ${result.kind}`);
  return result.shipment;
}

/** The API's answer for a poll as of `nowIso`, validated against the response schema. */
export function answer(poll: CarrierPoll, nowIso = poll.polled_at): TrackingRecord {
  const { record, facts } = normalized(poll);
  const tracking = toTrackingRecord(record, facts, { nowMs: Date.parse(nowIso), lane: null, cached: false, stale: false });
  expectValidRecord(tracking);
  return tracking;
}

export function expectValidRecord(value: unknown): void {
  const result = TrackingRecordSchema.safeParse(value);
  expect(result.success ? [] : result.error.issues).toEqual([]);
}
