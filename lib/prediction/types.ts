/**
 * The delivery prediction's shapes (contracts.md "Delivery prediction"). Pure declarations.
 */
import type { KeyMode, Stage } from '../schemas/index.ts';
import type { IstDay } from '../time/ist-day.ts';
import type { Position, PlaceNames } from './position.ts';

export const PREDICTION_LEVELS = ['lane', 'state_pair', 'zone', 'carrier'] as const;
export type PredictionLevel = (typeof PREDICTION_LEVELS)[number];

/** `insights.prediction` exactly as the contract writes it. */
export interface Prediction {
  delivery_date: IstDay;
  window: { p80: [IstDay, IstDay]; p90: [IstDay, IstDay] };
  on_time_probability: number | null;
  /** `position`: where the parcel was taken to be (position.ts), null when the cell used fell back past it. */
  basis: { level: PredictionLevel; sample_size: number; stage: Stage; position: Position | null; model_at: string };
}

/** A level needs this many delivered shipments for the stage before it answers (the contract's 30). */
export const MIN_DELIVERIES = 30;

/** Stages a prediction is made in: moving shipments, and booked ones (checkout's estimate). */
export const PREDICTED_STAGES: ReadonlySet<Stage> = new Set(['awaiting_pickup', 'in_transit', 'out_for_delivery', 'delivery_attempted', 'exception']);

/**
 * Where a pincode is, as the model needs it: its state (holidays, the state-pair level) and the
 * zone of a pincode pair. lib/places answers it; null when a pincode is unknown (that level is skipped).
 */
export interface PlaceLookup {
  stateOf(pincode: string): string | null;
  zoneOf(origin: string, destination: string): string | null;
  /** The names index the position resolver reads (position.ts); without it every position is `unknown`. */
  readonly names?: PlaceNames;
}

/** A place lookup that knows nothing: the lane and carrier levels still work. */
export const NO_PLACES: PlaceLookup = { stateOf: () => null, zoneOf: () => null };

/** What a prediction is asked about: one shipment as of one instant. */
export interface PredictionQuery {
  mode: KeyMode;
  carrier: string;
  serviceType: string | null;
  originPincode: string | null;
  destinationPincode: string | null;
  /** The state whose holidays apply to the delivery (the destination's), null: national only. */
  destinationState: string | null;
  stage: Stage;
  /** When the shipment entered its current stage (epoch ms). */
  stageEnteredMs: number;
  asOfMs: number;
  /** Carrier EDD (epoch ms), null without one. */
  eddMs: number | null;
  /** Where the latest scan is (position.ts); absent or null: `unknown`. */
  position?: Position | null;
  /** When the current stage's run began (in transit: the pickup, before the clock restarted at new places); absent or null: unknown. */
  runEnteredMs?: number | null;
}
