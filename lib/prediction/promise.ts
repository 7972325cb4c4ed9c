/**
 * A shop's promise (contracts.md "Delivery prediction", since 2026-11-28): the chance a moving
 * shipment is delivered by the end of the IST day the shop promised its customer. It is the
 * prediction's own `on_time_probability` path (the share of the shipment's cell delivered within
 * the working days up to that day), asked about the promised day instead of the carrier's EDD. Pure.
 */
import type { ShipmentFacts } from '../normalize/types.ts';
import type { KeyMode, TrackingRecord } from '../schemas/index.ts';
import { istDayStartMs, type IstDay } from '../time/ist-day.ts';
import type { Predictor, QueryFacts } from './records.ts';

/** `insights.prediction.promise` of a watch with `promised_by`. */
export interface PromiseJson {
  promised_by: IstDay;
  /** P(delivered by the end of `promised_by`, IST); 0 once that day has passed. */
  on_time_probability: number;
}

/**
 * P(delivered by the end of IST day `promisedBy`) as of `nowMs`, from the same cell as the record's
 * prediction; null when the record has no prediction (terminal, returning, no basis).
 */
export function promiseProbabilityOf(
  predictor: Predictor | undefined, query: QueryFacts, facts: ShipmentFacts, mode: KeyMode, nowMs: number, promisedBy: IstDay,
): number | null {
  // Any instant of the promised day names it: the model reads the EDD as its IST day.
  const asked = predictor?.predictFacts({ ...query, eddMs: istDayStartMs(promisedBy) }, facts, mode, nowMs);
  return asked?.on_time_probability ?? null;
}

/** The record with `insights.prediction.promise` set (unchanged when it has no prediction or no promise is known). */
export function withPromise(record: TrackingRecord, promise: PromiseJson | null): TrackingRecord {
  const prediction = record.insights.prediction;
  if (prediction === null || promise === null) return record;
  return { ...record, insights: { ...record.insights, prediction: { ...prediction, promise } } };
}
