/**
 * `tracking.running_late` (contracts.md "Delivery prediction", "A shop's promise"), pure: whether a
 * watch's shipment has just fallen below its on-time threshold. The probability is the promise's
 * (P(delivered by the end of `promised_by`)) when the watch has one, else the carrier EDD's
 * (`insights.prediction.on_time_probability`). Told once when it falls below `running_late_below`
 * while the shipment moves (it has a prediction: not delivered, returning, cancelled), and again
 * only after it came back to the threshold or above. A poll without a probability (no prediction,
 * no EDD) changes nothing.
 */
import type { TrackingRecord } from '../schemas/index.ts';

/** The threshold of a watch that names none. */
export const DEFAULT_RUNNING_LATE_BELOW = 0.5;

/** What a watch remembers for the rule: whether it last told "running late" and has not recovered since. */
export interface LateState {
  late_told?: boolean;
}

export interface RunningLate {
  promised_by: string | null;
  on_time_probability: number;
  delivery_date: string;
}

/** The probability the rule reads from a watch's record (its promise already set on it, withPromise). */
export function lateProbabilityOf(record: TrackingRecord, promisedBy: string | null): number | null {
  const prediction = record.insights.prediction;
  if (prediction === null) return null;
  if (promisedBy !== null) return prediction.promise?.promised_by === promisedBy ? prediction.promise.on_time_probability : null;
  return prediction.on_time_probability;
}

/** Whether `record` makes the watch tell `running_late` now, and its next state. */
export function runningLateOf(
  state: LateState, record: TrackingRecord, promisedBy: string | null, threshold: number,
): { late: RunningLate | null; next: Required<LateState> } {
  const told = state.late_told ?? false;
  const probability = lateProbabilityOf(record, promisedBy);
  if (probability === null) return { late: null, next: { late_told: told } };
  if (probability >= threshold) return { late: null, next: { late_told: false } };
  if (told) return { late: null, next: { late_told: true } };
  return {
    late: { promised_by: promisedBy, on_time_probability: probability, delivery_date: record.insights.prediction!.delivery_date },
    next: { late_told: true },
  };
}
