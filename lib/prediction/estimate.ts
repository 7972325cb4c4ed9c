/**
 * "Delivery by" before shipping (contracts.md "Delivery prediction", `GET /v1/estimate`): the same
 * model and the same lookup as a record's prediction, asked about a shipment that is booked and not
 * yet picked up (`awaiting_pickup`). Pure: it reads a built model.
 *
 * When the planned shipment is booked. A pickup happens only on a working day of the carrier at the
 * origin (its Sundays, the origin state's holidays), so the booking is taken on the first such day on
 * or after the ship date: now when that day is today, else 00:00 IST of that day (a morning booking,
 * as a shop's next-day dispatch is). For a ship date of yesterday (a client whose clock is still on
 * yesterday, or a parcel handed over yesterday and not yet scanned) the booking began at 00:00 IST
 * of that day and the answer is as of now: the survivors of that long without a pickup, exactly as
 * the record of such a shipment would be predicted. Deliveries land only on the destination's
 * working days, as for every prediction (model.ts).
 */
import type { KeyMode, Stage } from '../schemas/index.ts';
import { addDays, daysBetween, istDayOf, istDayStartMs, isIstDay, type IstDay } from '../time/ist-day.ts';
import type { PredictionModel } from './model.ts';
import type { ServedStates } from './served.ts';
import type { PlaceLookup, Prediction, PredictionLevel, PredictionQuery } from './types.ts';
import { dayNumberOfText, dayText, type WorkdayIndex } from './workdays.ts';

/** The stage an estimate is made in: booked, not yet picked up. */
export const ESTIMATE_STAGE: Stage = 'awaiting_pickup';
/** The latest ship date accepted, in days after today (IST): further out, the model's recent data says little. */
export const MAX_SHIP_DAYS_AHEAD = 90;
/** The earliest ship date accepted, in days before today (IST): yesterday, for clients a day behind IST. */
export const MAX_SHIP_DAYS_BEHIND = 1;

export interface EstimateRequest {
  mode: KeyMode;
  originPincode: string;
  destinationPincode: string;
  shipDate: IstDay;
  /** A carrier slug, or null: every carrier with a basis. */
  carrier: string | null;
  /** A service type (any case), or null: every service type learned for each carrier. */
  serviceType: string | null;
  nowMs: number;
}

export interface Estimate {
  carrier: string;
  /** As the model keys it (lower case); null for shipments whose carrier shows none. */
  service_type: string | null;
  delivery_date: IstDay;
  window: Prediction['window'];
  basis: Prediction['basis'];
}

export interface EstimateAnswer {
  origin_pincode: string;
  destination_pincode: string;
  ship_date: IstDay;
  estimates: Estimate[];
  fastest: string | null;
}

/**
 * Why a ship date is refused, or null when it is accepted: a real `YYYY-MM-DD` day from yesterday
 * to 90 days after today (IST).
 */
export function shipDateProblem(text: string, nowMs: number): string | null {
  if (!isIstDay(text)) return `ship_date must be a calendar day written YYYY-MM-DD; got ${JSON.stringify(text.slice(0, 40))}.`;
  const today = istDayOf(nowMs);
  const offset = daysBetween(today, text);
  if (offset < -MAX_SHIP_DAYS_BEHIND) return `ship_date ${text} is in the past: the earliest accepted is ${addDays(today, -MAX_SHIP_DAYS_BEHIND)} (IST).`;
  if (offset > MAX_SHIP_DAYS_AHEAD) {
    return `ship_date ${text} is more than ${MAX_SHIP_DAYS_AHEAD} days ahead: the latest accepted is ${addDays(today, MAX_SHIP_DAYS_AHEAD)} (IST).`;
  }
  return null;
}

/** When a planned shipment counts as booked, and the instant it is predicted as of (see the file's comment). */
export function bookingOf(
  workdays: WorkdayIndex, carrier: string, originState: string | null, shipDate: IstDay, nowMs: number,
): { enteredMs: number; asOfMs: number } {
  const context = workdays.contextOf(carrier, originState);
  let day = dayNumberOfText(shipDate);
  // A year of rest days in a row does not happen; the bound only keeps a broken calendar from looping.
  for (let i = 0; i < 366 && !workdays.isWorking(context, day); i++) day++;
  const pickupDay = dayText(day);
  const today = istDayOf(nowMs);
  const enteredMs = pickupDay === today ? nowMs : istDayStartMs(pickupDay);
  return { enteredMs, asOfMs: Math.max(nowMs, enteredMs) };
}

/** The prediction query of a planned shipment: what a booked record of it would be asked. */
export function estimateQueryOf(
  workdays: WorkdayIndex, places: PlaceLookup, req: EstimateRequest, carrier: string, serviceType: string | null,
): PredictionQuery {
  const { enteredMs, asOfMs } = bookingOf(workdays, carrier, places.stateOf(req.originPincode), req.shipDate, req.nowMs);
  return {
    mode: req.mode,
    carrier,
    serviceType,
    originPincode: req.originPincode,
    destinationPincode: req.destinationPincode,
    destinationState: places.stateOf(req.destinationPincode),
    stage: ESTIMATE_STAGE,
    stageEnteredMs: enteredMs,
    asOfMs,
    eddMs: null,
  };
}

/**
 * The levels whose figures may name `fastest`: learned on the route itself or between the two
 * states. A zone or carrier-level figure is the carrier's elsewhere, not a claim about this route.
 */
export const FASTEST_LEVELS: ReadonlySet<PredictionLevel> = new Set(['lane', 'state_pair']);

/** Earliest delivery day, then the earliest p80 end, then the earliest p90 end, then the slug. */
function faster(a: Estimate, b: Estimate): number {
  if (a.delivery_date !== b.delivery_date) return a.delivery_date < b.delivery_date ? -1 : 1;
  if (a.window.p80[1] !== b.window.p80[1]) return a.window.p80[1] < b.window.p80[1] ? -1 : 1;
  if (a.window.p90[1] !== b.window.p90[1]) return a.window.p90[1] < b.window.p90[1] ? -1 : 1;
  return a.carrier < b.carrier ? -1 : a.carrier > b.carrier ? 1 : 0;
}

/**
 * The estimates of a planned shipment from `model`: per carrier (the one asked, or every carrier the
 * model knows in the mode) and service type (each one learned for the carrier, or only the one
 * asked), those with a basis, by carrier then service type. With `served` (served.ts) and a
 * destination whose state is known, a carrier that delivered nothing into that state in the window
 * is left out. `fastest` is the carrier of the first by `faster` among the estimates whose basis is
 * the lane or the state pair, null when there is none.
 */
export function estimateOf(
  model: PredictionModel, places: PlaceLookup, workdays: WorkdayIndex, req: EstimateRequest, served: ServedStates | null = null,
): EstimateAnswer {
  const learned = model.learnedServices(req.mode, ESTIMATE_STAGE);
  const destinationState = places.stateOf(req.destinationPincode);
  const carriers = (req.carrier === null ? [...learned.keys()] : [req.carrier])
    .filter((carrier) => served === null || destinationState === null || served.serves(req.mode, carrier, destinationState));
  const estimates: Estimate[] = [];
  const wanted = req.serviceType?.trim().toLowerCase() || null;
  for (const carrier of carriers) {
    // Only service types the carrier was seen with: a carrier that never showed "express" would
    // otherwise answer for it from its any-service figures, under a name it never used.
    const services = (learned.get(carrier) ?? []).filter((s) => wanted === null || s === wanted);
    for (const serviceType of services) {
      const p = model.predict(estimateQueryOf(workdays, places, req, carrier, serviceType));
      if (p === null) continue;
      estimates.push({ carrier, service_type: serviceType, delivery_date: p.delivery_date, window: p.window, basis: p.basis });
    }
  }
  const candidates = estimates.filter((e) => FASTEST_LEVELS.has(e.basis.level));
  const best = candidates.length === 0 ? null : candidates.reduce((a, b) => (faster(b, a) < 0 ? b : a));
  return {
    origin_pincode: req.originPincode,
    destination_pincode: req.destinationPincode,
    ship_date: req.shipDate,
    estimates,
    fastest: best?.carrier ?? null,
  };
}
