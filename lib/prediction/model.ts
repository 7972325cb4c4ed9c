/**
 * The delivery model (contracts.md "Delivery prediction"; docs/engineers/prediction.md says why it
 * is built this way). Pure: it learns from delivered shipments handed to it and answers from tables.
 *
 * What it learns. For every delivered shipment, every stage episode it went through (booked, in
 * transit, out for delivery, after a failed attempt, held), and every time-in-stage bucket the
 * shipment was still in that stage for (before pickup: every day since the booking × daypart,
 * DAY_BUCKETS), one observation: as of a point in that bucket, how many days were left until it
 * was delivered (from the destination city on the destination's working days, whose calendar has
 * the carrier's Sundays, national and state holidays; before it calendar days: `countsCalendarDays`),
 * where the parcel was then (position.ts: its latest scan's
 * place) and the as-of time of day. Observations are computed once per shipment (`observeShipment`:
 * the embedded book keeps them, the ClickHouse path stores them as rows) and counted per level key
 * (lane → state pair → zone → carrier, each with the service type; then the carrier of any service
 * type), stage and bucket, and below the stage per position × as-of daypart (the "detail" keys,
 * from the state pair down). Each observation weighs the time the shipment spent in its bucket: a
 * prediction is asked at every poll, so a shipment that waits longer is asked more often.
 * A lookup takes the most specific level whose detail cell has 30+ delivered shipments, else the
 * most specific plain one (detail cells only in the stages and positions where the build's own
 * calibration days did not show them predicting worse: `chooseDetail`); it maps the cell's most
 * likely count and its calibrated windows (cells.ts: a nested family of ranges, calibrated
 * split-conformally per stage and position on the latest 14 days) onto working days on or after the
 * as-of day, so a rest day is never predicted.
 *
 * Censoring: returns (RTO) and lost shipments never deliver, so they give no delivery time: the
 * model predicts the delivery day of a shipment that will be delivered, and answers null for one
 * returning. Shipments still moving at build time are unknown: observations whose as-of lies in the
 * last `resolveDays` before the model time are left out, as only the fast ones of them would have
 * been delivered yet (keeping them would bias every window early).
 */
import { withRoom } from '../compact/columns.ts';
import type { KeyMode, Stage } from '../schemas/index.ts';
import { DAY_MS, HOUR_MS, IST_OFFSET_MS, MINUTE_MS } from '../time/index.ts';
import { K_SLOTS, MAX_K, rankCell, SCORE_SCALE, scoresByDay, windowAt } from './cells.ts';
import { runEnteredMs, type StageEpisode } from './episodes.ts';
import { POSITION_COUNT, POSITIONS, positionIndexOf } from './position.ts';
import { MIN_DELIVERIES, PREDICTED_STAGES, type PlaceLookup, type Prediction, type PredictionLevel, type PredictionQuery } from './types.ts';
import { dayNumberOf, dayNumberOfText, dayText, type WorkdayIndex } from './workdays.ts';
import type { IstDay } from '../time/ist-day.ts';

export { MAX_K } from './cells.ts';
/** Lower bounds of the time-in-stage buckets, in hours. */
export const BUCKET_HOURS = [0, 6, 12, 24, 36, 48, 72, 96, 144, 216, 336] as const;
export const BUCKETS = BUCKET_HOURS.length;
/** As-of time of day (IST hour) parts that calibration tells apart: a morning has a delivery run left. */
const DAYPART_HOURS = [11, 16] as const;
export const DAYPARTS = DAYPART_HOURS.length + 1;
export const LEVEL_COUNT = 5;
const LEVELS: readonly PredictionLevel[] = ['lane', 'state_pair', 'zone', 'carrier', 'carrier'];
/** Levels that also have detail keys (position × slot: daypart or pace, `detailSlotOf`): the lane is too thin for them. */
export const DETAIL_FROM_LEVEL = 1;
export const DETAIL_LEVELS = LEVEL_COUNT - DETAIL_FROM_LEVEL;
/** Every key a lookup may read, in its order: the detail keys, then the plain ones. */
export const SLOT_COUNT = DETAIL_LEVELS + LEVEL_COUNT;
const SLOT_LEVELS: readonly PredictionLevel[] = [...LEVELS.slice(DETAIL_FROM_LEVEL), ...LEVELS];
/** Detail variants: 0 is none (a plain key), 1 + position × DAYPARTS + slot otherwise (a pace class is one of DAYPARTS too). */
export const VARIANTS = 1 + POSITION_COUNT * (DAYPART_HOURS.length + 1);
export const variantOf = (position: number, slot: number) => 1 + position * DAYPARTS + slot;
/** The detail key of a level key (the ClickHouse path builds the same text). */
export const detailKey = (key: string, position: number, slot: number) => `${key}|P${position}${slot}`;
/** Observation weights: the time spent in the bucket, in these units (rounded up, at least one). */
export const WEIGHT_UNIT_MS = 30 * MINUTE_MS;
/**
 * Before pickup there is no scan to place: those observations have position `unknown`, their buckets
 * are days since the booking × the as-of daypart (DAY_BUCKETS: a booking after the pickup cut-off
 * waits a day), they have no detail keys, and `basis.position` stays null (the booked stage is also
 * `/v1/estimate`'s, asked with no scans, which names `fastest` only from a lane or state-pair basis).
 */
export const UNPLACED_STAGE_LIST: readonly Stage[] = ['awaiting_pickup'];
const UNPLACED_STAGES: ReadonlySet<Stage> = new Set(UNPLACED_STAGE_LIST);
/**
 * Detail levels of the unplaced stages: none. Their buckets already hold the as-of daypart (DAY_BUCKETS),
 * so a detail cell (position unknown × daypart) would count a plain cell's deliveries again under
 * another key: the state pair's read first moved the sandbox's booked exact day by 0.1 point (50,000
 * journeys). Before day buckets the state pair's cells of the hour were read first; a zone's, read
 * before the lane's plain one, had left no carrier on Delhi → Bengaluru a lane or state-pair basis
 * (no `fastest` there): the route's own figures come first.
 */
export const UNPLACED_DETAIL_LEVELS = 0;
export const STAGE_LIST: readonly Stage[] = [...PREDICTED_STAGES];
const IN_TRANSIT: Stage = 'in_transit';
export const STAGES = STAGE_LIST.length;
const STAGE_INDEX = new Map<Stage, number>(STAGE_LIST.map((s, i) => [s, i]));
export const stageIndexOf = (stage: Stage): number | undefined => STAGE_INDEX.get(stage);
/** Stage indexes without a place (a bit each): their observations have UNPLACED_DETAIL_LEVELS detail keys. */
const UNPLACED_MASK = STAGE_LIST.reduce((m, st, i) => (UNPLACED_STAGES.has(st) ? m | (1 << i) : m), 0);
/** The stated levels of the windows, in thousandths (the split-conformal targets). */
export const TARGETS = [800, 900] as const;

/** A delivered shipment as the model learns from it. */
export interface DeliveredShipment {
  mode: KeyMode;
  carrier: string;
  serviceType: string | null;
  originPincode: string | null;
  destinationPincode: string | null;
  destinationState: string | null;
  deliveredMs: number;
  /** Its episodes before delivery, in time order. */
  episodes: readonly StageEpisode[];
  /** Its scans' instants, oldest first, and the position after each (position.ts codes); absent: unknown throughout. */
  scanMs?: ArrayLike<number>;
  scanPositions?: ArrayLike<number>;
  /** Spreads observations within a bucket: any stable number per shipment (e.g. a hash of its AWB). */
  seed: number;
}

export interface BuildOptions {
  modelAtMs: number;
  /** Observations whose as-of is older than this many days are not learned from (the lane window). */
  windowDays: number;
  /** Observations with an as-of in the last `resolveDays` are left out (see the file's comment). Default 7. */
  resolveDays?: number;
  /** The calibration window before the resolved end, in days. Default 14. */
  calibrationDays?: number;
  places: PlaceLookup;
  workdays: WorkdayIndex;
}

/** The time bounds of one build (epoch ms), shared with the ClickHouse path's SQL. */
export interface BuildSpan {
  startMs: number;
  calibrationStartMs: number;
  resolvedEndMs: number;
}

export function buildSpanOf(options: Pick<BuildOptions, 'modelAtMs' | 'windowDays' | 'resolveDays' | 'calibrationDays'>): BuildSpan {
  const resolvedEndMs = options.modelAtMs - (options.resolveDays ?? 7) * DAY_MS;
  return {
    startMs: options.modelAtMs - options.windowDays * DAY_MS,
    calibrationStartMs: resolvedEndMs - (options.calibrationDays ?? 14) * DAY_MS,
    resolvedEndMs,
  };
}

export function bucketOf(elapsedHours: number): number {
  let b = 0;
  while (b + 1 < BUCKETS && elapsedHours >= BUCKET_HOURS[b + 1]!) b++;
  return b;
}

/**
 * The booked stage's buckets are days, not hours: the IST day since the booking (0, 1, 2) × the as-of
 * daypart, a rest day of the carrier at the origin (no pickup run: a Sunday, a holiday) whichever
 * day it is, then one bucket from the fourth day on (DAY_BUCKETS in all). Before pickup the calendar
 * decides: whether the booking's day has passed (carriers pick up on the next working day, or the
 * same day before their cut-off), whether today has a pickup run at all, and whether it is still
 * ahead. Hours since the booking mixed them (6–12 h after it is the same evening or the next
 * morning; a Sunday morning and a Tuesday morning alike). Measured at 50,000 journeys, booked exact
 * day / MAE: hours 45.0 % / 0.805 on the sandbox, 34.8 % / 1.256 on the second generator; days ×
 * dayparts 53.4 % / 0.669 and 36.9 % / 1.230; with the rest day 61.4 % / 0.553 and 38.3 % / 1.213
 * (docs/engineers/prediction.md has the rest).
 */
const DAY_BUCKET_DAYS = 3;
const LATER_DAYS_BUCKET = DAY_BUCKET_DAYS * DAYPARTS;
const REST_DAY_BUCKET = LATER_DAYS_BUCKET + 1;
export const DAY_BUCKETS = REST_DAY_BUCKET + 1;
// A cell row has BUCKETS slots per stage, shared by both kinds of bucket.
if (DAY_BUCKETS > BUCKETS) throw new Error('prediction: more day buckets than a row has slots');

/** The booked stage's bucket of an as-of instant (see DAY_BUCKETS); `restDay`: no pickup run on the as-of day. */
export function dayBucketOf(enteredMs: number, asOfMs: number, restDay: boolean): number {
  const day = Math.max(0, dayNumberOf(asOfMs) - dayNumberOf(enteredMs));
  if (day >= DAY_BUCKET_DAYS) return LATER_DAYS_BUCKET;
  return restDay ? REST_DAY_BUCKET : day * DAYPARTS + daypartOf(asOfMs);
}

/** The working days that decide a pickup: the carrier's at the origin (its state when the places directory knows the pincode). */
export function pickupContextOf(workdays: WorkdayIndex, places: PlaceLookup, carrier: string, originPincode: string | null): string {
  return workdays.contextOf(carrier, originPincode !== null && /^\d{6}$/.test(originPincode) ? places.stateOf(originPincode) : null);
}

/** A bucket's span of as-of instants: [bucket, from, to] (the last bucket's: a week). */
type BucketSpan = [number, number, number];

/** The time-in-stage buckets an episode entered at `enteredMs` reaches before `end`. */
function* hourSpans(enteredMs: number, end: number): Generator<BucketSpan> {
  for (let b = 0; b < BUCKETS; b++) {
    const from = enteredMs + BUCKET_HOURS[b]! * HOUR_MS;
    if (from >= end) return;
    yield [b, from, b + 1 < BUCKETS ? enteredMs + BUCKET_HOURS[b + 1]! * HOUR_MS : from + 7 * DAY_MS];
  }
}

/**
 * The booked stage's day buckets (`dayBucketOf`) an episode entered at `enteredMs` reaches before
 * `end`, one span each: a rest day's dayparts, and rest days in a row, are one span. One observation
 * per bucket (the ClickHouse table's key): a second run of rest days in the first three (a holiday,
 * a working day, a Sunday) is not observed.
 */
function* daySpans(enteredMs: number, end: number, restDay: (dayNumber: number) => boolean): Generator<BucketSpan> {
  const firstDay = dayNumberOf(enteredMs);
  let from = enteredMs;
  let held: BucketSpan | null = null;
  let restSeen = false;
  for (let day = 0; day < DAY_BUCKET_DAYS && from < end; day++) {
    const rest = restDay(firstDay + day);
    for (let part = 0; part < DAYPARTS && from < end; part++) {
      const to = (firstDay + day) * DAY_MS - IST_OFFSET_MS + (DAYPART_HOURS[part] ?? 24) * HOUR_MS;
      if (to <= from) continue;
      const bucket = rest ? REST_DAY_BUCKET : day * DAYPARTS + part;
      if (held?.[0] === bucket) held[2] = to;
      else {
        if (held) yield held;
        held = rest && restSeen ? null : [bucket, from, to];
        restSeen ||= rest;
      }
      from = to;
    }
  }
  if (held) yield held;
  if (from < end) yield [LATER_DAYS_BUCKET, from, from + 7 * DAY_MS];
}

/**
 * How an observation counts its days to the delivery (k). The line haul runs on the calendar (trucks
 * and flights run on Sundays and holidays); only the last mile keeps the destination's working days.
 * Until the parcel is in the destination city (booked; in transit at the origin, en route, in the
 * destination state or at a place unknown) k is calendar days from the as-of day to the delivery's
 * ready day (`readyDayOf`), and a lookup maps k back to the first working day on or after the as-of
 * day + k: a parcel picked up on a Friday and delivered on the Tuesday counts k = 4 as one picked up
 * on a Monday and delivered on the Friday does, where working days gave the Friday's 3 (its Sunday
 * out) and mixed 3 and 4 in one cell (a Sunday right before the delivery is still not counted: a
 * parcel ready on Saturday night is delivered on Monday, as one ready on Sunday is). From the
 * destination city on, and out for delivery, after an attempt or held, k counts working days (the
 * next run, the next attempt): calendar days measured worse there. Measured at 50,000 journeys
 * (`BENCH_PREDICTION_ONLY=backtest BENCH_PREDICTION_JOURNEYS=50000 npm run bench -- prediction`),
 * overall exact day / MAE: working days everywhere 70.2 % / 0.438 on the sandbox, 49.7 % / 0.990 on
 * the second generator; this 71.0 % / 0.426 and 51.7 % / 0.955 (docs/engineers/prediction.md).
 */
const CALENDAR_POSITIONS: ReadonlySet<number> = new Set((['unknown', 'origin', 'en_route', 'destination_state'] as const).map(positionIndexOf));
export function countsCalendarDays(stage: string, position: number): boolean {
  return UNPLACED_STAGES.has(stage as Stage) || (stage === IN_TRANSIT && CALENDAR_POSITIONS.has(position));
}

/**
 * The delivery's ready day: the first day from which the delivery day is the next working day of the
 * context (the day after the latest working day before it; the delivery day itself when the day
 * before worked, or when the delivery came on a rest day).
 */
export function readyDayOf(workdays: WorkdayIndex, context: string, deliveredDay: number): number {
  return workdays.isWorking(context, deliveredDay) ? workdays.latestWorking(context, deliveredDay - 1) + 1 : deliveredDay;
}

export function daypartOf(ms: number): number {
  const hour = Math.floor((((ms + IST_OFFSET_MS) % DAY_MS) + DAY_MS) % DAY_MS / HOUR_MS);
  let p = 0;
  while (p < DAYPART_HOURS.length && hour >= DAYPART_HOURS[p]!) p++;
  return p;
}

/**
 * Hours from pickup to the current position that tell paces apart (three classes, as many as the
 * dayparts whose slot they share): en route and in the destination state, how long the parcel took
 * to get here says how long its line haul runs (a slow start, a slow haul), more than the time of day does.
 */
const PACE_HOURS = [20, 40] as const;
/** In transit at these positions (POSITIONS' indexes: en route, destination state) the detail slot is the pace. */
const PACED_POSITIONS: ReadonlySet<number> = new Set([positionIndexOf('en_route'), positionIndexOf('destination_state')]);

/** No detail slot: a paced position whose run start is not known reads the plain cells (never a guessed pace). */
export const UNKNOWN_SLOT = -1;

/**
 * The detail slot of an as-of instant: the pace class (hours from the in-transit run's start, the
 * pickup, to `enteredMs`, when the parcel reached its current place) in transit en route and in the
 * destination state, the as-of daypart everywhere else. Measured at 50,000 journeys against the
 * daypart there (`BENCH_PREDICTION_ONLY=backtest BENCH_PREDICTION_JOURNEYS=50000 npm run bench --
 * prediction`): en route exact day 62.8 → 65.3 % on the sandbox, 39.5 → 39.9 % (MAE 1.255 → 1.177)
 * on the second generator.
 */
export function detailSlotOf(stage: string, position: number, asOfMs: number, enteredMs: number, runEnteredMs: number | null | undefined): number {
  if (stage !== IN_TRANSIT || !PACED_POSITIONS.has(position)) return daypartOf(asOfMs);
  if (runEnteredMs == null) return UNKNOWN_SLOT;
  const hours = (enteredMs - runEnteredMs) / HOUR_MS;
  let pace = 0;
  while (pace < PACE_HOURS.length && hours >= PACE_HOURS[pace]!) pace++;
  return pace;
}

function serviceKey(serviceType: string | null): string {
  const s = serviceType?.trim().toLowerCase();
  return s ? s : '-';
}

/** The level keys of a shipment, most specific first (null where a level cannot be named). */
export function levelKeys(
  mode: KeyMode, carrier: string, serviceType: string | null, origin: string | null, destination: string | null, places: PlaceLookup,
): (string | null)[] {
  const base = `${mode}|${carrier}|${serviceKey(serviceType)}`;
  const both = origin !== null && destination !== null && /^\d{6}$/.test(origin) && /^\d{6}$/.test(destination);
  const so = both ? places.stateOf(origin) : null;
  const sd = both ? places.stateOf(destination) : null;
  const zone = both ? places.zoneOf(origin, destination) : null;
  return [
    both ? `${base}|L|${origin.slice(0, 3)}:${destination.slice(0, 3)}` : null,
    so && sd ? `${base}|S|${so}>${sd}` : null,
    zone ? `${base}|Z|${zone}` : null,
    `${base}|C`,
    `${mode}|${carrier}|*|C`,
  ];
}

/** Deterministic spread in [0, 1) from a shipment's seed, its episode and its bucket. */
function spread(seed: number, i: number, b: number): number {
  let x = (seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(b + 7, 0x85ebca6b)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 4294967296;
}

/**
 * A delivered shipment's observations, computed once: its level keys and, per observation, two
 * numbers: the as-of instant in whole seconds (what ClickHouse's DateTime holds, so both paths see
 * the same instant) and a code packing its weight (WEIGHT_UNIT_MS units of time spent in the
 * bucket), episode, position, stage, bucket, detail slot and k (`unpack`). Two numbers, not three: the
 * embedded book keeps every delivered shipment's observations (25 MiB at a million polls with three).
 */
export interface ObservedShipment {
  keys: readonly (string | null)[];
  deliveredMs: number;
  /** [asOfS, code] pairs. */
  obs: Uint32Array;
}

export interface Observation {
  weight: number;
  episode: number;
  position: number;
  stage: number;
  bucket: number;
  /** The detail slot (`detailSlotOf`): the as-of daypart, or the pace en route and in the destination state. */
  slot: number;
  k: number;
}

/**
 * A code's bits, high to low: weight 9 (the longest bucket, 7 days, is 336 units), episode 4, position 3,
 * stage 4, bucket 4, slot 2, k 6. Readers of one field mask it (the build reads them in place).
 */
const MAX_EPISODES = 16;
const MAX_WEIGHT = 511;
const pack = (o: Observation) =>
  ((o.weight << 23) | (o.episode << 19) | (o.position << 16) | (o.stage << 12) | (o.bucket << 8) | (o.slot << 6) | o.k) >>> 0;
/** The weight of a packed observation. */
export const weightOf = (code: number) => code >>> 23;
export function unpack(code: number): Observation {
  return {
    weight: code >>> 23, episode: (code >>> 19) & 15, position: (code >>> 16) & 7, stage: (code >>> 12) & 15, bucket: (code >>> 8) & 15,
    slot: (code >>> 6) & 3, k: code & 63,
  };
}

/** The position code after the latest scan at or before `ms` (0, unknown, before the first). */
function positionAt(s: DeliveredShipment, ms: number): number {
  const times = s.scanMs;
  const positions = s.scanPositions;
  if (!times || !positions) return 0;
  let found = 0;
  for (let i = 0; i < times.length && times[i]! <= ms; i++) found = positions[i]!;
  return found;
}

/**
 * Every observation of one delivered shipment. Survivors only: an observation in bucket b exists
 * only when the shipment was still in the stage at its as-of instant.
 */
export function observeShipment(s: DeliveredShipment, places: PlaceLookup, workdays: WorkdayIndex): ObservedShipment {
  const keys = levelKeys(s.mode, s.carrier, s.serviceType, s.originPincode, s.destinationPincode, places);
  const context = workdays.contextOf(s.carrier, s.destinationState);
  const pickupContext = pickupContextOf(workdays, places, s.carrier, s.originPincode);
  const deliveredDay = dayNumberOf(s.deliveredMs);
  const readyDay = readyDayOf(workdays, context, deliveredDay);
  const out: number[] = [];
  s.episodes.forEach((e, i) => {
    const stage = STAGE_INDEX.get(e.stage);
    // Episodes past the 16th (a journey of many failed attempts) are not learned from.
    if (stage === undefined || i >= MAX_EPISODES) return;
    const placed = !UNPLACED_STAGES.has(e.stage);
    const end = Math.min(e.leftMs ?? s.deliveredMs, s.deliveredMs);
    for (const [b, from, to] of placed ? hourSpans(e.enteredMs, end) : daySpans(e.enteredMs, end, (d) => !workdays.isWorking(pickupContext, d))) {
      // A point within the bucket (while still in the stage), so as-of times of day and weekdays vary as real ones do.
      const until = Math.min(to, end);
      const asOfS = Math.floor((from + spread(s.seed, i, b) * (until - from)) / 1000);
      const asOfMs = asOfS * 1000;
      const position = placed ? positionAt(s, asOfMs) : 0;
      const asOfDay = dayNumberOf(asOfMs);
      const days = countsCalendarDays(e.stage, position) ? Math.max(0, readyDay - asOfDay) : workdays.between(context, asOfDay, deliveredDay);
      const k = Math.min(MAX_K, days);
      const weight = Math.min(MAX_WEIGHT, Math.max(1, Math.ceil((until - from) / WEIGHT_UNIT_MS)));
      const detailSlot = detailSlotOf(e.stage, position, asOfMs, e.enteredMs, runEnteredMs(s.episodes, i));
      out.push(asOfS, pack({ weight, episode: i, position, stage, bucket: b, slot: detailSlot, k }));
    }
  });
  return { keys, deliveredMs: s.deliveredMs, obs: Uint32Array.from(out) };
}

/** Windows per cell: ranges of k per position of the query, [a80, b80, a90, b90] each. */
const WINDOWS_PER_CELL = POSITION_COUNT * 4;

/**
 * The finished cells, what a lookup reads, in columns (cell i's figures at i): an object per cell
 * with two typed arrays of its own held ~450 bytes beyond its figures (30,418 cells at a million
 * polls: ~13 MiB of objects and pointers).
 */
class CellColumns {
  count = 0;
  /** Delivered shipments' observations in the cell (the contract's sample size; 30+ to answer). */
  n = new Float64Array(256);
  /**
   * The point estimate's k: the cell's mode, the most likely day as the contract names it. The
   * median was measured too (docs/engineers/prediction.md): no lower error, fewer exact days.
   */
  point = new Uint8Array(256);
  /**
   * permilleBy[i × K_SLOTS + k] = the share (by weight) delivered within k working days, in
   * thousandths: answers give it to three decimals (on_time_probability, a promise's probability),
   * so it is rounded once here; doubles held four times the memory (13.5 MiB at a million polls).
   */
  permilleBy = new Uint16Array(256 * K_SLOTS);
  windows = new Uint8Array(256 * WINDOWS_PER_CELL);

  /** Finishes a cell from its counts (ranked, its windows at the thresholds of its stage): its index. */
  add(counts: ArrayLike<number>, n: number, stage: number, thresholds: Thresholds): number {
    const i = this.count++;
    this.n = withRoom(this.n, this.count);
    this.point = withRoom(this.point, this.count);
    this.permilleBy = withRoom(this.permilleBy, this.count * K_SLOTS);
    this.windows = withRoom(this.windows, this.count * WINDOWS_PER_CELL);
    const ranked = rankCell(counts);
    this.n[i] = n;
    this.point[i] = ranked.mode;
    let running = 0;
    for (let k = 0; k < K_SLOTS; k++) {
      running += counts[k]!;
      this.permilleBy[i * K_SLOTS + k] = ranked.n === 0 ? 0 : Math.round((running / ranked.n) * 1000);
    }
    for (let p = 0; p < POSITION_COUNT; p++) {
      const t80 = thresholds[thresholdIndex(stage, p, 0)]!;
      const w80 = windowAt(ranked, t80, TARGETS[0]);
      const w90 = windowAt(ranked, Math.max(thresholds[thresholdIndex(stage, p, 1)]!, t80), TARGETS[1]);
      this.windows.set([w80[0], w80[1], w90[0], w90[1]], i * WINDOWS_PER_CELL + p * 4);
    }
    return i;
  }
}

/** Thresholds (cells.ts scores) per stage × position × target: what calibration chose. */
export type Thresholds = Uint16Array;
export const thresholdIndex = (stage: number, position: number, target: number) => (stage * POSITION_COUNT + position) * TARGETS.length + target;

/** Uncalibrated thresholds: the stated levels themselves. */
export function nominalThresholds(): Thresholds {
  const t = new Uint16Array(STAGES * POSITION_COUNT * TARGETS.length);
  for (let s = 0; s < STAGES; s++) for (let p = 0; p < POSITION_COUNT; p++) TARGETS.forEach((v, i) => { t[thresholdIndex(s, p, i)] = v; });
  return t;
}

/**
 * The threshold from calibration scores with their weights (sorted by score): the smallest score
 * whose weighted rank reaches ⌈(W+w̄)·target⌉ (split-conformal; with unit weights the ⌈(n+1)·target⌉-th
 * smallest), or the nominal level under 30 scores.
 */
export function thresholdOf(sortedScores: ArrayLike<number>, target: number, weights?: ArrayLike<number>): number {
  const n = sortedScores.length;
  if (n < MIN_DELIVERIES) return target;
  let total = 0;
  for (let i = 0; i < n; i++) total += weights ? weights[i]! : 1;
  // The conformal "+1": one more observation of average weight. running/W ≥ (n+1)/n · target, in
  // doubles as the ClickHouse path writes it.
  let running = 0;
  for (let i = 0; i < n; i++) {
    running += weights ? weights[i]! : 1;
    if (running * n * SCORE_SCALE >= total * (n + 1) * target) return sortedScores[i]!;
  }
  return sortedScores[n - 1]!;
}

/** Calibrated thresholds of one group: a stage and a position, or a stage over every position (`position` null). */
export interface ThresholdGroup {
  stage: number;
  position: number | null;
  /** Calibration deliveries scored in the group. */
  n: number;
  t80: number;
  t90: number;
  /** Whether lookups in this stage and position read detail keys first (`chooseDetail`; absent: they do). */
  detail?: boolean;
}

/** How many standard errors the detail cells' extra error must reach before the plain cells are read instead. */
export const DETAIL_EVIDENCE = 3;

/**
 * Detail keys (position × as-of daypart) or plain ones for one stage and position. `excess` is the
 * sum over calibration deliveries of weight × (the detail way's absolute error − the plain way's), in
 * working days, and `squares` the sum of those terms squared: detail unless 30+ deliveries had both
 * and the excess is DETAIL_EVIDENCE standard errors above zero (√squares: a paired test of the
 * difference). Thinner cells can predict worse where the time of day or the place tells little (the
 * second generator's bookings: its pickups ignore the hour), and the issue asks for them "where the
 * data supports it": the build's own held-out days decide. The margin, because a model of 20,000
 * journeys has a few dozen deliveries per position in its calibration days, each a shipment's several
 * correlated polls: a bare comparison chose the plain cells en route on the sandbox there and lost
 * 4.7 points of exact days on the days after.
 */
export function chooseDetail(excess: number, squares: number, n: number): boolean {
  return n < MIN_DELIVERIES || excess <= DETAIL_EVIDENCE * Math.sqrt(squares);
}

/** Per stage × position, 1 where lookups read detail keys first (groups without a choice: 1). */
export function detailChoiceOf(groups: Iterable<ThresholdGroup>): Uint8Array {
  const chosen = new Uint8Array(STAGES * POSITION_COUNT).fill(1);
  for (const g of groups) {
    if (g.position !== null && g.position < POSITION_COUNT && g.stage < STAGES && g.detail === false) chosen[g.stage * POSITION_COUNT + g.position] = 0;
  }
  return chosen;
}

/** The position of a detail key (`detailKey`), -1 for a plain key. */
export function detailPositionOf(key: string): number {
  const at = key.length - 4;
  return at > 0 && key.charCodeAt(at) === 124 /* | */ && key[at + 1] === 'P' ? key.charCodeAt(at + 2) - 48 : -1;
}

/**
 * The thresholds per stage × position from the groups calibration made: a position's own with 30+
 * scores, else its stage's over every position with 30+, else the nominal levels (both paths read it so).
 */
export function thresholdsOf(groups: Iterable<ThresholdGroup>): Thresholds {
  const t = nominalThresholds();
  const pooled = new Map<number, ThresholdGroup>();
  const own = new Map<number, ThresholdGroup>();
  for (const g of groups) {
    if (g.n < MIN_DELIVERIES || g.stage >= STAGES) continue;
    if (g.position === null) pooled.set(g.stage, g);
    else if (g.position < POSITION_COUNT) own.set(g.stage * POSITION_COUNT + g.position, g);
  }
  for (let s = 0; s < STAGES; s++) {
    for (let p = 0; p < POSITION_COUNT; p++) {
      const g = own.get(s * POSITION_COUNT + p) ?? pooled.get(s);
      if (!g) continue;
      t[thresholdIndex(s, p, 0)] = g.t80;
      t[thresholdIndex(s, p, 1)] = g.t90;
    }
  }
  return t;
}

/**
 * Per key (level key or detail key) a row of STAGES × BUCKETS slots (stage × bucket), each its
 * cell's index + 1, 0 where the cell has under 30 deliveries: `rowOf` gives a key's row start.
 */
class CellTable {
  readonly rowOf = new Map<string, number>();
  slots = new Int32Array(64 * SLOTS_PER_ROW);

  /** Puts `cell` at slot `at` of `key`'s row (made when absent). */
  put(key: string, at: number, cell: number): void {
    let row = this.rowOf.get(key);
    if (row === undefined) {
      row = this.rowOf.size * SLOTS_PER_ROW;
      // Grown before the write below reads `this.slots`.
      this.slots = withRoom(this.slots, row + SLOTS_PER_ROW);
      this.rowOf.set(key, row);
    }
    this.slots[row + at] = cell + 1;
  }

  /** The cell at slot `at` of the row starting at `row` (-1: no row); -1 for none. */
  cellAt(row: number, at: number): number {
    return row < 0 ? -1 : this.slots[row + at]! - 1;
  }

  rowOfKey(key: string | null): number {
    return key === null ? -1 : this.rowOf.get(key) ?? -1;
  }
}
const SLOTS_PER_ROW = STAGES * BUCKETS;
const slot = (stage: number, bucket: number) => stage * BUCKETS + bucket;

/** One row of the model's tables as the ClickHouse path stores it (and the embedded build makes it). */
export interface CellCounts {
  key: string;
  stage: number;
  bucket: number;
  /** Observations (delivered shipments' stays in the cell). */
  n: number;
  /** Weights by k (K_SLOTS). */
  counts: ArrayLike<number>;
}

export interface ModelSummary {
  modelAt: string;
  shipments: number;
  observations: number;
  cells: number;
  /** Calibrated thresholds per stage and position (POSITIONS' order), as shares of a cell's weight: [p80, p90]. */
  thresholds: Record<string, [number, number][]>;
  /** Per stage, the positions whose lookups read detail cells (position × daypart): the build chose them and has some. */
  detail: Record<string, string[]>;
}

function summaryThresholds(t: Thresholds): ModelSummary['thresholds'] {
  const out: ModelSummary['thresholds'] = {};
  STAGE_LIST.forEach((stage, s) => {
    out[stage] = Array.from({ length: POSITION_COUNT }, (_, p) => [t[thresholdIndex(s, p, 0)]! / SCORE_SCALE, t[thresholdIndex(s, p, 1)]! / SCORE_SCALE]);
  });
  return out;
}

/** Per stage, the positions with detail cells in the table (POSITIONS' order). */
function detailPositionsOf(table: CellTable): ModelSummary['detail'] {
  const seen = new Uint8Array(STAGES * POSITION_COUNT);
  for (const [key, row] of table.rowOf) {
    const position = detailPositionOf(key);
    if (position < 0) continue;
    for (let s = 0; s < STAGES; s++) {
      if (table.slots.subarray(row + s * BUCKETS, row + (s + 1) * BUCKETS).some((c) => c !== 0)) seen[s * POSITION_COUNT + position] = 1;
    }
  }
  return Object.fromEntries(STAGE_LIST.map((stage, s) => [stage, POSITIONS.filter((_, p) => seen[s * POSITION_COUNT + p] === 1)]));
}

/** What a lookup resolves once per shipment (its keys' rows): a cached record keeps it. */
export interface ResolvedKeys {
  /** The plain level keys' row starts in the model's table (-1: none). */
  rows: number[];
  /** The level keys themselves (detail keys are made from them). */
  keys: readonly (string | null)[];
  /** Detail rows per variant, resolved when first asked (a record is asked at several times of day). */
  detail: (number[] | undefined)[];
}

/** A built model's tables in columns, one entry per cell (key index, stage × bucket slot, its figures). */
export interface PredictionModelState {
  modelAtMs: number;
  shipments: number;
  observations: number;
  thresholds: Thresholds;
  keys: string[];
  cellKey: Uint32Array;
  cellSlot: Uint16Array;
  n: Float64Array;
  point: Uint8Array;
  /** K_SLOTS per cell. */
  permilleBy: Uint16Array;
  /** POSITION_COUNT × 4 per cell. */
  windows: Uint8Array;
}

/** Precomputed tables and the lookup over them. */
export class PredictionModel {
  private readonly modelAtIso: string;
  private readonly servicesMemo = new Map<string, Map<string, (string | null)[]>>();
  readonly summary: ModelSummary;

  private readonly table: CellTable;
  private readonly cells: CellColumns;
  readonly thresholds: Thresholds;
  readonly modelAtMs: number;
  private readonly places: PlaceLookup;
  private readonly workdays: WorkdayIndex;
  private constructor(
    table: CellTable,
    cells: CellColumns,
    thresholds: Thresholds,
    modelAtMs: number,
    places: PlaceLookup,
    workdays: WorkdayIndex,
    summary: Omit<ModelSummary, 'thresholds' | 'modelAt' | 'detail'>,
  ) {
    this.table = table;
    this.cells = cells;
    this.thresholds = thresholds;
    this.modelAtMs = modelAtMs;
    this.places = places;
    this.workdays = workdays;
    this.modelAtIso = new Date(modelAtMs).toISOString();
    // `detail` walks every key: read when asked (tests, tools), not at each load of a model.
    let detail: ModelSummary['detail'] | undefined;
    this.summary = {
      modelAt: this.modelAtIso, ...summary, thresholds: summaryThresholds(thresholds),
      get detail() { return (detail ??= detailPositionsOf(table)); },
    };
  }

  /**
   * Carriers of `mode` with cells for `stage`, each with the service types learned (as keyed: lower
   * case; null for shipments that showed none), sorted. `/v1/estimate` asks every one of them.
   */
  learnedServices(mode: KeyMode, stage: Stage): Map<string, (string | null)[]> {
    const memoKey = `${mode}|${stage}`;
    let found = this.servicesMemo.get(memoKey);
    if (found) return found;
    const s = STAGE_INDEX.get(stage);
    const sets = new Map<string, Set<string>>();
    for (const [key, row] of this.table.rowOf) {
      // Carrier-level keys of one service type: mode|carrier|service|C (service '*' is any; detail keys have a fifth part).
      const parts = key.split('|');
      if (s === undefined || parts.length !== 4 || parts[0] !== mode || parts[3] !== 'C' || parts[2] === '*') continue;
      if (!this.table.slots.subarray(row + s * BUCKETS, row + (s + 1) * BUCKETS).some((c) => c !== 0)) continue;
      let set = sets.get(parts[1]!);
      if (!set) sets.set(parts[1]!, (set = new Set()));
      set.add(parts[2]!);
    }
    found = new Map([...sets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([carrier, set]) => [carrier, [...set].sort().map((x) => (x === '-' ? null : x))]));
    this.servicesMemo.set(memoKey, found);
    return found;
  }

  /**
   * Builds from stored cell counts (the ClickHouse path's tables) and calibrated thresholds; detail
   * cells of a stage and position whose `detail` choice is 0 (`detailChoiceOf`) are left out, so
   * lookups there read the plain keys.
   */
  static fromCounts(
    rows: Iterable<CellCounts>, thresholds: Thresholds, modelAtMs: number, places: PlaceLookup, workdays: WorkdayIndex,
    summary: Omit<ModelSummary, 'thresholds' | 'modelAt' | 'cells' | 'detail'>, detail?: Uint8Array,
  ): PredictionModel {
    const table = new CellTable();
    const cells = new CellColumns();
    for (const r of rows) {
      if (r.n < MIN_DELIVERIES) continue;
      const position = detail ? detailPositionOf(r.key) : -1;
      if (position >= 0 && detail![r.stage * POSITION_COUNT + position] === 0) continue;
      table.put(r.key, slot(r.stage, r.bucket), cells.add(r.counts, r.n, r.stage, thresholds));
    }
    return new PredictionModel(table, cells, thresholds, modelAtMs, places, workdays, { ...summary, cells: cells.count });
  }

  /** The finished tables in columns (a checkpoint keeps them, so a restart answers before its first rebuild). */
  exportState(): PredictionModelState {
    const keys: string[] = [];
    const cellKey = new Uint32Array(this.cells.count);
    const cellSlot = new Uint16Array(this.cells.count);
    for (const [key, row] of this.table.rowOf) {
      for (let at = 0; at < SLOTS_PER_ROW; at++) {
        const cell = this.table.cellAt(row, at);
        if (cell < 0) continue;
        cellKey[cell] = keys.length;
        cellSlot[cell] = at;
      }
      keys.push(key);
    }
    const { count } = this.cells;
    return {
      modelAtMs: this.modelAtMs, shipments: this.summary.shipments, observations: this.summary.observations,
      thresholds: this.thresholds.slice(), keys, cellKey, cellSlot,
      n: this.cells.n.slice(0, count), point: this.cells.point.slice(0, count),
      permilleBy: this.cells.permilleBy.slice(0, count * K_SLOTS), windows: this.cells.windows.slice(0, count * WINDOWS_PER_CELL),
    };
  }

  /** The model an `exportState` wrote. */
  static fromState(state: PredictionModelState, places: PlaceLookup, workdays: WorkdayIndex): PredictionModel {
    const count = state.cellKey.length;
    if (state.cellSlot.length !== count || state.n.length !== count || state.point.length !== count
      || state.permilleBy.length !== count * K_SLOTS || state.windows.length !== count * WINDOWS_PER_CELL) {
      throw new Error('prediction model state: columns differ in length');
    }
    // Copies: the state's arrays may be views of a whole checkpoint file (v8.deserialize).
    const cells = new CellColumns();
    cells.count = count;
    cells.n = state.n.slice();
    cells.point = state.point.slice();
    cells.permilleBy = state.permilleBy.slice();
    cells.windows = state.windows.slice();
    const table = new CellTable();
    for (let i = 0; i < count; i++) {
      const at = state.cellSlot[i]!;
      if (at >= SLOTS_PER_ROW) throw new Error(`prediction model state: slot ${at} past a row's ${SLOTS_PER_ROW}`);
      table.put(state.keys[state.cellKey[i]!]!, at, i);
    }
    return new PredictionModel(table, cells, state.thresholds.slice(), state.modelAtMs, places, workdays, {
      shipments: state.shipments, observations: state.observations, cells: count,
    });
  }

  /** An empty model: answers null until the first build. */
  static empty(places: PlaceLookup, workdays: WorkdayIndex, modelAtMs: number): PredictionModel {
    const none = { shipments: 0, observations: 0, cells: 0 };
    return new PredictionModel(new CellTable(), new CellColumns(), nominalThresholds(), modelAtMs, places, workdays, none);
  }

  /** The rows of a shipment's level keys (a lookup over a cached record reuses them). */
  resolve(keys: readonly (string | null)[]): ResolvedKeys {
    return { rows: keys.map((k) => this.table.rowOfKey(k)), keys, detail: new Array(VARIANTS) };
  }

  /** The query's level keys resolved against this model: what `predict` reads, kept by callers that ask again. */
  resolveQuery(q: PredictionQuery): ResolvedKeys {
    return this.resolve(levelKeys(q.mode, q.carrier, q.serviceType, q.originPincode, q.destinationPincode, this.places));
  }

  private detailRows(resolved: ResolvedKeys, position: number, slot: number): number[] {
    const variant = variantOf(position, slot);
    let rows = resolved.detail[variant];
    if (rows === undefined) {
      rows = resolved.keys.slice(DETAIL_FROM_LEVEL).map((k) => this.table.rowOfKey(k === null ? null : detailKey(k, position, slot)));
      resolved.detail[variant] = rows;
    }
    return rows;
  }

  /**
   * P(delivered by the end of IST day `day`) as of `q.asOfMs`: the share of the cell `predict` reads
   * within that many working days (0 for a day before the as-of day), null where `predict` is null.
   * What a shop's promise (`prediction.promise`) is scored with; the same reading as `on_time_probability`.
   */
  probabilityBy(q: PredictionQuery, day: IstDay, resolved?: ResolvedKeys): number | null {
    const found = this.cellOf(q, resolved);
    if (found === null) return null;
    const context = this.workdays.contextOf(q.carrier, q.destinationState);
    return this.shareBy(found.cell, countsCalendarDays(q.stage, found.position), context, dayNumberOf(q.asOfMs), dayNumberOfText(day));
  }

  /**
   * The cell's share delivered by the end of `byDay`. Counted in calendar days (`countsCalendarDays`),
   * a delivery by then is one whose ready day is at most the latest working day on or before it.
   */
  private shareBy(cell: number, calendarDays: boolean, context: string, asOfDay: number, byDay: number): number {
    const days = !calendarDays ? (byDay < asOfDay ? -1 : this.workdays.between(context, asOfDay, byDay))
      : this.workdays.latestWorking(context, byDay) - asOfDay;
    return days < 0 ? 0 : this.cells.permilleBy[cell * K_SLOTS + Math.min(days, MAX_K)]! / 1000;
  }

  /** The cell a query reads (see the file's comment), its level and whether it was a detail cell; null without one. */
  private cellOf(q: PredictionQuery, resolved?: ResolvedKeys): { cell: number; level: PredictionLevel; placed: boolean; position: number } | null {
    const stage = STAGE_INDEX.get(q.stage);
    if (stage === undefined) return null;
    const keys = resolved ?? this.resolveQuery(q);
    const rows = keys.rows;
    const bucket = UNPLACED_STAGES.has(q.stage) ? this.bookedBucketOf(q) : bucketOf(Math.max(0, q.asOfMs - q.stageEnteredMs) / HOUR_MS);
    const position = q.position == null || UNPLACED_STAGES.has(q.stage) ? 0 : positionIndexOf(q.position);
    const cellSlot = slot(stage, bucket);
    const table = this.table;
    let cell = -1;
    let level: PredictionLevel = 'carrier';
    let placed = false;
    // Detail cells exist only where the build chose them for the stage and position (`chooseDetail`).
    const detailSlot = detailSlotOf(q.stage, position, q.asOfMs, q.stageEnteredMs, q.runEnteredMs);
    const detail = detailSlot === UNKNOWN_SLOT ? [] : this.detailRows(keys, position, detailSlot);
    const detailLevels = detailSlot === UNKNOWN_SLOT ? 0 : UNPLACED_STAGES.has(q.stage) ? UNPLACED_DETAIL_LEVELS : DETAIL_LEVELS;
    for (let l = 0; l < detailLevels && cell < 0; l++) {
      cell = table.cellAt(detail[l]!, cellSlot);
      if (cell >= 0) { level = SLOT_LEVELS[l]!; placed = !UNPLACED_STAGES.has(q.stage); }
    }
    for (let l = 0; l < LEVEL_COUNT && cell < 0; l++) {
      cell = table.cellAt(rows[l]!, cellSlot);
      if (cell >= 0) level = LEVELS[l]!;
    }
    if (cell < 0) {
      // Longer in the stage than the carrier's data reaches: the longest bucket it does reach. Its
      // survivors are the slowest the data knows, which errs late rather than early.
      for (let l = LEVEL_COUNT - 2; l < LEVEL_COUNT && cell < 0; l++) {
        for (let b = bucket - 1; b >= 0 && cell < 0; b--) cell = table.cellAt(rows[l]!, slot(stage, b));
      }
      level = 'carrier';
      if (cell < 0) return null;
    }
    return { cell, level, placed, position };
  }

  /** The booked stage's bucket of a query: its day since the booking, daypart, or the origin's rest day. */
  private bookedBucketOf(q: PredictionQuery): number {
    const context = pickupContextOf(this.workdays, this.places, q.carrier, q.originPincode);
    return dayBucketOf(q.stageEnteredMs, q.asOfMs, !this.workdays.isWorking(context, dayNumberOf(q.asOfMs)));
  }

  /** The prediction as of `q.asOfMs`, null where the contract says null. */
  predict(q: PredictionQuery, resolved?: ResolvedKeys): Prediction | null {
    const found = this.cellOf(q, resolved);
    if (found === null) return null;
    const { cell, level, placed, position } = found;
    const p = cell * WINDOWS_PER_CELL + position * 4;
    const w = this.cells.windows;
    const context = this.workdays.contextOf(q.carrier, q.destinationState);
    const asOfDay = dayNumberOf(q.asOfMs);
    const calendarDays = countsCalendarDays(q.stage, position);
    // k back to a day: the first working day on or after as-of + k calendar days, or the k-th working day after the as-of day.
    const day = (k: number) => dayText(calendarDays ? this.workdays.add(context, asOfDay + k, 0) : this.workdays.add(context, asOfDay, k));
    let onTime: number | null = null;
    if (q.eddMs !== null) onTime = this.shareBy(cell, calendarDays, context, asOfDay, dayNumberOf(q.eddMs));
    return {
      delivery_date: day(Math.min(Math.max(this.cells.point[cell]!, w[p]!), w[p + 1]!)),
      window: { p80: [day(w[p]!), day(w[p + 1]!)], p90: [day(w[p + 2]!), day(w[p + 3]!)] },
      on_time_probability: onTime,
      basis: { level, sample_size: this.cells.n[cell]!, stage: q.stage, position: placed ? POSITIONS[position]! : null, model_at: this.modelAtIso },
    };
  }
}

/** An empty model: answers null until the first build. */
export function emptyModel(places: PlaceLookup, workdays: WorkdayIndex, modelAtMs = 0): PredictionModel {
  return PredictionModel.empty(places, workdays, modelAtMs);
}

/**
 * Interned keys: counting by numbers, not by concatenated strings, keeps a rebuild of a million
 * shipments in seconds. Detail keys are ids too, named only when the table is written out.
 */
class KeyIds {
  readonly ids = new Map<string, number>();
  readonly names: string[] = [];
  /** Per id: its base key id and variant (-1, 0 for a plain key). */
  readonly base: number[] = [];
  readonly variant: number[] = [];
  private readonly details = new Map<number, number>();
  of(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(key, id);
      this.names.push(key);
      this.base.push(-1);
      this.variant.push(0);
    }
    return id;
  }
  detailOf(baseId: number, variant: number): number {
    const at = baseId * VARIANTS + variant;
    let id = this.details.get(at);
    if (id === undefined) {
      id = this.names.length;
      this.details.set(at, id);
      this.names.push('');
      this.base.push(baseId);
      this.variant.push(variant);
    }
    return id;
  }
  nameOf(id: number): string {
    const base = this.base[id]!;
    if (base < 0) return this.names[id]!;
    const v = this.variant[id]! - 1;
    return detailKey(this.names[base]!, Math.floor(v / DAYPARTS), v % DAYPARTS);
  }
}

/** An early cell as calibration reads it: its days' scores and its mode. */
interface RankedEarly {
  scores: Uint16Array;
  mode: number;
}

/** Per stage × position, 1 where k counts calendar days (`countsCalendarDays`). */
const CALENDAR_GROUPS = Uint8Array.from({ length: STAGES * POSITION_COUNT },
  (_, g) => (countsCalendarDays(STAGE_LIST[Math.floor(g / POSITION_COUNT)]!, g % POSITION_COUNT) ? 1 : 0));

/** The `stage|position` pairs whose k counts calendar days (the ClickHouse path's calibration reads them). */
export const CALENDAR_GROUP_KEYS: readonly string[] = [...CALENDAR_GROUPS.keys()]
  .filter((g) => CALENDAR_GROUPS[g] === 1).map((g) => `${STAGE_LIST[Math.floor(g / POSITION_COUNT)]}|${g % POSITION_COUNT}`);

/**
 * The last k a lookup maps to an observation's delivery day. Counted in calendar days, k is the
 * first day of the delivery's (the ready day), and every k up to the delivery day itself maps to it
 * (a window from Monday covers a parcel ready on Sunday); in working days only its own k does.
 * `daysAhead`: IST days from the as-of day to the delivery day.
 */
function lastKOf(code: number, daysAhead: number): number {
  return CALENDAR_GROUPS[((code >>> 12) & 15) * POSITION_COUNT + ((code >>> 16) & 7)] ? Math.min(MAX_K, daysAhead) : code & 63;
}

/**
 * A calibration delivery's score: the least of its cell's scores over the k that name its day. A
 * window holds the day when it holds any of them, so calibration counts coverage of days, as the
 * backtest and a user do (scores of k alone left windows from a Monday over-covering by Sunday's k).
 */
function dayScoreOf(scores: ArrayLike<number>, k: number, lastK: number): number {
  let least = scores[k]!;
  for (let j = k + 1; j <= lastK; j++) least = Math.min(least, scores[j]!);
  return least;
}

/** Per cell: K_SLOTS weights of the whole window, K_SLOTS of the early part, then the two observation counts. */
const CELL_LENGTH = 2 * K_SLOTS + 2;

/**
 * Learns the model from observed shipments (any order, each once). Weights per key (plain and
 * detail) × stage × bucket, for the whole window and for the part before the calibration window;
 * the early counts score the calibration window's deliveries (each under the cell a lookup would
 * have used), and the thresholds are the weighted split-conformal quantiles of those scores per
 * stage and position. lib/clickhouse/prediction.ts does the same in SQL.
 */
export function buildFromObserved(shipments: Iterable<ObservedShipment>, options: BuildOptions): PredictionModel {
  const span = buildSpanOf(options);
  const startS = Math.ceil(span.startMs / 1000);
  const calS = Math.ceil(span.calibrationStartMs / 1000);
  const endS = Math.ceil(span.resolvedEndMs / 1000);
  const ids = new KeyIds();
  // Two passes over the observations. Most cells (level or detail key × stage × bucket) are thin:
  // the first pass only counts observations per cell id, so the second allocates weights for the
  // cells that reach 30 (the rest are never a basis nor a calibration's cell). Cell ids are dense
  // (key ids count up from 0): arrays indexed by them, not Maps (a Map lookup per observation and
  // key cost most of a rebuild), and no array per thin cell (an allocation per observation, else).
  const list = Array.isArray(shipments) ? (shipments as readonly ObservedShipment[]) : [...shipments];
  const keyIds = new Int32Array(LEVEL_COUNT);
  const slotIds = new Int32Array(SLOT_COUNT);
  // This shipment's detail key ids by level × variant (-1: not yet asked).
  const detailIds = new Int32Array(DETAIL_LEVELS * VARIANTS);
  // Every shipment's level key ids, looked up by name in the first pass and read back in the
  // second: a Map lookup by string per shipment and level was a quarter of a rebuild.
  const shipmentKeyIds = new Int32Array(list.length * LEVEL_COUNT);
  let firstPass = true;
  /**
   * Calls `visit` per observation in the window with its cell slot, the SLOT_COUNT key ids in
   * `slotIds` (-1: none) and the last k that names its delivery day (`lastKOf`; read for calibration only).
   */
  const eachObservation = (visit: (cellSlot: number, code: number, weight: number, early: boolean, lastK: number) => void) => {
    for (let n = 0; n < list.length; n++) {
      const s = list[n]!;
      if (s.deliveredMs > options.modelAtMs) continue;
      const deliveredDay = dayNumberOf(s.deliveredMs);
      const at = n * LEVEL_COUNT;
      if (firstPass) for (let l = 0; l < LEVEL_COUNT; l++) shipmentKeyIds[at + l] = s.keys[l] == null ? -1 : ids.of(s.keys[l]!);
      for (let l = 0; l < LEVEL_COUNT; l++) keyIds[l] = shipmentKeyIds[at + l]!;
      detailIds.fill(-1);
      const obs = s.obs;
      for (let i = 0; i < obs.length; i += 2) {
        const asOfS = obs[i]!;
        if (asOfS < startS || asOfS >= endS) continue;
        const code = obs[i + 1]!;
        const variant = variantOf((code >>> 16) & 7, (code >>> 6) & 3);
        const detailLevels = (UNPLACED_MASK >>> ((code >>> 12) & 15)) & 1 ? UNPLACED_DETAIL_LEVELS : DETAIL_LEVELS;
        for (let l = 0; l < DETAIL_LEVELS; l++) {
          const base = l < detailLevels ? keyIds[DETAIL_FROM_LEVEL + l]! : -1;
          let id = -1;
          if (base >= 0) {
            id = detailIds[l * VARIANTS + variant]!;
            if (id < 0) id = detailIds[l * VARIANTS + variant] = ids.detailOf(base, variant);
          }
          slotIds[l] = id;
        }
        for (let l = 0; l < LEVEL_COUNT; l++) slotIds[DETAIL_LEVELS + l] = keyIds[l]!;
        const early = asOfS < calS;
        // The last k is read by calibration entries only (the second pass's, not early).
        const lastK = early || firstPass ? 0 : lastKOf(code, deliveredDay - dayNumberOf(asOfS * 1000));
        visit(slot((code >>> 12) & 15, (code >>> 8) & 15), code, weightOf(code), early, lastK);
      }
    }
  };
  // Pass 1: observations per cell id.
  let seen = new Int32Array(1 << 16);
  eachObservation((cellSlot) => {
    for (let l = 0; l < SLOT_COUNT; l++) {
      const id = slotIds[l]!;
      if (id < 0) continue;
      const cellId = id * STAGES * BUCKETS + cellSlot;
      seen = withRoom(seen, cellId + 1);
      seen[cellId]!++;
    }
  });
  firstPass = false;
  // Pass 2: weights of the cells with 30+, and the calibration window's observations, flat
  // (SLOT_COUNT key ids, then the code and the weight, per entry: an object per observation made
  // the garbage collector a third of a 1 M-shipment rebuild).
  // Cells that reach 30, in the order first met; `denseOf[cellId]` is a cell's index there (-1:
  // none). An array indexed by cell id itself held a pointer per possible cell (tens of millions at
  // a million shipments), which the garbage collector walked again and again.
  const denseOf = new Int32Array(seen.length).fill(-1);
  // The counted cells' CELL_LENGTH numbers each, in one array (an Int32Array per cell was an object
  // per cell to allocate and to reach through a pointer), and the calibration entries in another (a
  // number[] of tens of millions grew by copies the garbage collector then walked: a sixth of a rebuild).
  let cellCounts = new Int32Array(CELL_LENGTH * 4096);
  const cellOrder: number[] = [];
  // Per entry: the SLOT_COUNT key ids, the code, the weight, the last k of its delivery day.
  const ENTRY = SLOT_COUNT + 3;
  let calibration = new Int32Array(1 << 16);
  let calibrationLength = 0;
  const shipmentCount = list.reduce((n, s) => n + (s.deliveredMs > options.modelAtMs ? 0 : 1), 0);
  let observations = 0;
  eachObservation((cellSlot, code, weight, early, lastK) => {
    observations++;
    const k = code & 63;
    for (let l = 0; l < SLOT_COUNT; l++) {
      const id = slotIds[l]!;
      if (id < 0) continue;
      const cellId = id * STAGES * BUCKETS + cellSlot;
      if (seen[cellId]! < MIN_DELIVERIES) continue;
      let d = denseOf[cellId]!;
      if (d < 0) {
        d = denseOf[cellId] = cellOrder.length;
        cellOrder.push(cellId);
        cellCounts = withRoom(cellCounts, cellOrder.length * CELL_LENGTH);
      }
      const c = d * CELL_LENGTH;
      cellCounts[c + k]! += weight;
      cellCounts[c + 2 * K_SLOTS]!++;
      if (early) { cellCounts[c + K_SLOTS + k]! += weight; cellCounts[c + 2 * K_SLOTS + 1]!++; }
    }
    if (!early) {
      calibration = withRoom(calibration, calibrationLength + ENTRY);
      calibration.set(slotIds, calibrationLength);
      calibration[calibrationLength + SLOT_COUNT] = code;
      calibration[calibrationLength + SLOT_COUNT + 1] = weight;
      calibration[calibrationLength + SLOT_COUNT + 2] = lastK;
      calibrationLength += ENTRY;
    }
  });
  // Early cells, ranked once each when a calibration delivery first needs them: their days' scores and mode.
  const early = new Map<number, RankedEarly | null>();
  const earlyOf = (cellId: number): RankedEarly | null => {
    let e = early.get(cellId);
    if (e === undefined) {
      const d = cellId < denseOf.length ? denseOf[cellId]! : -1;
      const c = d * CELL_LENGTH;
      const ranked = d >= 0 && cellCounts[c + 2 * K_SLOTS + 1]! >= MIN_DELIVERIES ? rankCell(cellCounts.subarray(c + K_SLOTS, c + 2 * K_SLOTS)) : null;
      e = ranked === null ? null : { scores: scoresByDay(ranked), mode: ranked.mode };
      early.set(cellId, e);
    }
    return e;
  };
  /** The early cell the calibration entry at `at` reads: the first with 30+ of its keys from slot `from` on (0: detail keys first). */
  const earlyCellAt = (at: number, from: number): RankedEarly | null => {
    const code = calibration[at + SLOT_COUNT]!;
    const cellSlot = slot((code >>> 12) & 15, (code >>> 8) & 15);
    for (let l = from; l < SLOT_COUNT; l++) {
      const id = calibration[at + l]!;
      const e = id < 0 ? null : earlyOf(id * STAGES * BUCKETS + cellSlot);
      if (e !== null) return e;
    }
    return null;
  };
  const groups = STAGES * POSITION_COUNT;
  const groupOf = (code: number) => ((code >>> 12) & 15) * POSITION_COUNT + ((code >>> 16) & 7);
  // Detail keys or plain ones, per stage and position (`chooseDetail`): how much farther the detail
  // way's early mode is from the calibration window's deliveries than the plain way's (weighted as
  // the scores are), and that excess's squares for its standard error.
  // Each entry's score under both ways (0: no early cell), kept for the thresholds below, as the
  // ClickHouse path carries `score_d` and `score_p`.
  const entries = calibrationLength / ENTRY;
  const scoreWithDetail = new Uint16Array(entries);
  const scorePlain = new Uint16Array(entries);
  const errors = { excess: new Float64Array(groups), squares: new Float64Array(groups), n: new Int32Array(groups) };
  for (let e = 0; e < entries; e++) {
    const at = e * ENTRY;
    const withDetail = earlyCellAt(at, 0);
    const plain = earlyCellAt(at, DETAIL_LEVELS);
    if (withDetail === null || plain === null) continue;
    const code = calibration[at + SLOT_COUNT]!;
    const k = code & 63;
    const lastK = calibration[at + SLOT_COUNT + 2]!;
    scoreWithDetail[e] = dayScoreOf(withDetail.scores, k, lastK);
    scorePlain[e] = dayScoreOf(plain.scores, k, lastK);
    const weight = calibration[at + SLOT_COUNT + 1]!;
    const group = groupOf(code);
    const excess = weight * (Math.abs(k - withDetail.mode) - Math.abs(k - plain.mode));
    errors.excess[group]! += excess;
    errors.squares[group]! += excess * excess;
    errors.n[group]!++;
  }
  const detailChosen = Uint8Array.from({ length: groups }, (_, g) => (chooseDetail(errors.excess[g]!, errors.squares[g]!, errors.n[g]!) ? 1 : 0));
  const scores: number[][] = Array.from({ length: groups }, () => []);
  const weights: number[][] = Array.from({ length: groups }, () => []);
  for (let e = 0; e < entries; e++) {
    const at = e * ENTRY;
    const group = groupOf(calibration[at + SLOT_COUNT]!);
    const score = detailChosen[group] ? scoreWithDetail[e]! : scorePlain[e]!;
    if (score === 0) continue;
    scores[group]!.push(score);
    weights[group]!.push(calibration[at + SLOT_COUNT + 1]!);
  }
  const calibrated: ThresholdGroup[] = [];
  const calibrate = (stage: number, position: number | null, groupScores: number[], groupWeights: number[]) => {
    // Sorted by score, then weight: both paths order ties the same way.
    const order = groupScores.map((_, i) => i).sort((a, b) => groupScores[a]! - groupScores[b]! || groupWeights[a]! - groupWeights[b]!);
    const sorted = order.map((i) => groupScores[i]!);
    const w = order.map((i) => groupWeights[i]!);
    calibrated.push({ stage, position, n: sorted.length, t80: thresholdOf(sorted, TARGETS[0], w), t90: thresholdOf(sorted, TARGETS[1], w) });
  };
  for (let stage = 0; stage < STAGES; stage++) {
    const all: number[] = [];
    const allWeights: number[] = [];
    for (let position = 0; position < POSITION_COUNT; position++) {
      const g = stage * POSITION_COUNT + position;
      if (scores[g]!.length > 0) calibrate(stage, position, scores[g]!, weights[g]!);
      for (let i = 0; i < scores[g]!.length; i++) { all.push(scores[g]![i]!); allWeights.push(weights[g]![i]!); }
    }
    if (all.length > 0) calibrate(stage, null, all, allWeights);
  }
  const thresholds = thresholdsOf(calibrated);
  function* rows(): Generator<CellCounts> {
    for (let d = 0; d < cellOrder.length; d++) {
      const cellId = cellOrder[d]!;
      const c = d * CELL_LENGTH;
      const keyId = Math.floor(cellId / (STAGES * BUCKETS));
      const rest = cellId - keyId * STAGES * BUCKETS;
      const n = cellCounts[c + 2 * K_SLOTS]!;
      yield { key: ids.nameOf(keyId), stage: Math.floor(rest / BUCKETS), bucket: rest % BUCKETS, n, counts: cellCounts.subarray(c, c + K_SLOTS) };
    }
  }
  const summary = { shipments: shipmentCount, observations };
  return PredictionModel.fromCounts(rows(), thresholds, options.modelAtMs, options.places, options.workdays, summary, detailChosen);
}

/** Learns the model from delivered shipments (observing each first). */
export function buildModel(shipments: Iterable<DeliveredShipment>, options: BuildOptions): PredictionModel {
  const { places, workdays } = options;
  return buildFromObserved((function* () { for (const s of shipments) yield observeShipment(s, places, workdays); })(), options);
}
