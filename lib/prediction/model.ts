/**
 * The delivery model (contracts.md "Delivery prediction"; docs/engineers/prediction.md says why it
 * is built this way). Pure: it learns from delivered shipments handed to it and answers from tables.
 *
 * What it learns. For every delivered shipment, every stage episode it went through (booked, in
 * transit, out for delivery, after a failed attempt, held), and every time-in-stage bucket the
 * shipment was still in that stage for, one observation: as of a point in that bucket, how many of
 * the destination's working days (calendar: the carrier's Sundays, national and state holidays)
 * were left until it was delivered. Observations are counted per level key (lane → state pair →
 * zone → carrier, each with the service type; then the carrier of any service type), stage and
 * bucket. A lookup takes the most specific level whose cell has 30+ delivered shipments, maps its
 * most likely count and its narrowest 80 % / 90 % ranges of counts onto working days after the
 * as-of day — so a rest day is never predicted — and widens or narrows them by the split-conformal
 * correction learned on the latest window for the stage and the as-of time of day.
 *
 * Censoring: returns (RTO) and lost shipments never deliver, so they give no delivery time: the
 * model predicts the delivery day of a shipment that will be delivered, and answers null for one
 * returning. Shipments still moving at build time are unknown: observations whose as-of lies in the
 * last `resolveDays` before the model time are left out, as only the fast ones of them would have
 * been delivered yet (keeping them would bias every window early).
 */
import type { Stage } from '../schemas/index.ts';
import { DAY_MS, HOUR_MS, IST_OFFSET_MS } from '../time/index.ts';
import type { StageEpisode } from './episodes.ts';
import { MIN_DELIVERIES, PREDICTED_STAGES, type PlaceLookup, type Prediction, type PredictionLevel, type PredictionQuery } from './types.ts';
import { dayNumberOf, dayText, type WorkdayIndex } from './workdays.ts';
import type { KeyMode } from '../schemas/index.ts';

/** Lower bounds of the time-in-stage buckets, in hours. */
export const BUCKET_HOURS = [0, 6, 12, 24, 36, 48, 72, 96, 144, 216, 336] as const;
/** Counts of working days above this are counted here (a tail bin): windows never reach it in practice. */
export const MAX_K = 45;
/** As-of time of day (IST hour) parts that calibration tells apart: a morning has a delivery run left. */
const DAYPART_HOURS = [11, 16] as const;
const DAYPARTS = DAYPART_HOURS.length + 1;
const LEVELS: readonly PredictionLevel[] = ['lane', 'state_pair', 'zone', 'carrier', 'carrier'];
const STAGE_LIST = [...PREDICTED_STAGES];
const STAGE_INDEX = new Map<Stage, number>(STAGE_LIST.map((s, i) => [s, i]));

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

export function bucketOf(elapsedHours: number): number {
  let b = 0;
  while (b + 1 < BUCKET_HOURS.length && elapsedHours >= BUCKET_HOURS[b + 1]!) b++;
  return b;
}

function daypartOf(ms: number): number {
  const hour = Math.floor(((ms + IST_OFFSET_MS) % DAY_MS) / HOUR_MS);
  let p = 0;
  while (p < DAYPART_HOURS.length && hour >= DAYPART_HOURS[p]!) p++;
  return p;
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

/** A finished cell: what a lookup reads. Counts of working days left, k = 0..MAX_K. */
export interface Cell {
  n: number;
  mode: number;
  /** cdf[k] = share delivered within k working days. */
  cdf: Float64Array;
  p80: [number, number];
  p90: [number, number];
}

/** The narrowest [a, b] holding at least `level` of the counts (ties: the most mass, then the earliest). */
function narrowest(counts: Int32Array, n: number, level: number): [number, number] {
  const need = Math.ceil(level * n - 1e-9);
  let best: [number, number] = [0, MAX_K];
  let bestWidth = Infinity;
  let bestMass = -1;
  for (let a = 0; a <= MAX_K; a++) {
    let mass = 0;
    for (let b = a; b <= MAX_K; b++) {
      mass += counts[b]!;
      if (mass >= need) {
        const width = b - a;
        if (width < bestWidth || (width === bestWidth && mass > bestMass)) {
          best = [a, b];
          bestWidth = width;
          bestMass = mass;
        }
        break;
      }
    }
  }
  return best;
}

function finish(counts: Int32Array): Cell {
  let n = 0;
  let mode = 0;
  for (let k = 0; k <= MAX_K; k++) {
    n += counts[k]!;
    if (counts[k]! > counts[mode]!) mode = k;
  }
  const cdf = new Float64Array(MAX_K + 1);
  let running = 0;
  for (let k = 0; k <= MAX_K; k++) {
    running += counts[k]!;
    cdf[k] = n === 0 ? 0 : running / n;
  }
  return { n, mode, cdf, p80: narrowest(counts, n, 0.8), p90: narrowest(counts, n, 0.9) };
}

/** Per level key and stage: one count array per bucket (absent until observed). */
type CountTable = Map<string, (Int32Array | undefined)[]>;
type CellTable = Map<string, (Cell | undefined)[]>;

function addCount(table: CountTable, key: string, bucket: number, k: number): void {
  let row = table.get(key);
  if (!row) table.set(key, (row = new Array(BUCKET_HOURS.length)));
  let counts = row[bucket];
  if (!counts) row[bucket] = counts = new Int32Array(MAX_K + 1);
  counts[k]!++;
}

function finishAll(table: CountTable): CellTable {
  const out: CellTable = new Map();
  for (const [key, row] of table) out.set(key, row.map((c) => (c ? finish(c) : undefined)));
  return out;
}

/** The cell a lookup uses: the first level with 30+ for the stage and bucket; else the carrier's longest bucket below with 30+. */
function cellFor(cells: CellTable, keys: readonly (string | null)[], stage: Stage, bucket: number): { cell: Cell; level: PredictionLevel } | null {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === null) continue;
    const cell = cells.get(`${key}|${stage}`)?.[bucket];
    if (cell && cell.n >= MIN_DELIVERIES) return { cell, level: LEVELS[i]! };
  }
  // Longer in the stage than the carrier's data reaches: the longest bucket it does reach. Its
  // survivors are the slowest the data knows, which errs late rather than early.
  for (let i = keys.length - 2; i < keys.length; i++) {
    const row = keys[i] === null ? undefined : cells.get(`${keys[i]}|${stage}`);
    if (!row) continue;
    for (let b = bucket - 1; b >= 0; b--) {
      const cell = row[b];
      if (cell && cell.n >= MIN_DELIVERIES) return { cell, level: 'carrier' };
    }
  }
  return null;
}

/** One observation: as of `asOfMs`, in `stage` for a while (`bucket`), `k` working days were left. */
interface Observation {
  keys: (string | null)[];
  stage: Stage;
  bucket: number;
  asOfMs: number;
  k: number;
}

/** Deterministic spread in [0, 1) from a shipment's seed, its episode and its bucket. */
function spread(seed: number, i: number, b: number): number {
  let x = (seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(b + 7, 0x85ebca6b)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 4294967296;
}

/**
 * Every observation of one delivered shipment. Survivors only: an observation in bucket b exists
 * only when the shipment was still in the stage at its as-of instant.
 */
function observe(s: DeliveredShipment, keys: (string | null)[], workdays: WorkdayIndex, emit: (o: Observation) => void): void {
  const context = workdays.contextOf(s.carrier, s.destinationState);
  const deliveredDay = dayNumberOf(s.deliveredMs);
  s.episodes.forEach((e, i) => {
    if (!PREDICTED_STAGES.has(e.stage)) return;
    const end = Math.min(e.leftMs ?? s.deliveredMs, s.deliveredMs);
    for (let b = 0; b < BUCKET_HOURS.length; b++) {
      const from = e.enteredMs + BUCKET_HOURS[b]! * HOUR_MS;
      if (from >= end) break;
      const to = b + 1 < BUCKET_HOURS.length ? e.enteredMs + BUCKET_HOURS[b + 1]! * HOUR_MS : from + 7 * DAY_MS;
      // A point within the bucket (while still in the stage), so as-of times of day and weekdays vary as real ones do.
      const asOfMs = from + spread(s.seed, i, b) * (Math.min(to, end) - from);
      const k = Math.min(MAX_K, workdays.between(context, dayNumberOf(asOfMs), deliveredDay));
      emit({ keys, stage: e.stage, bucket: b, asOfMs, k });
    }
  });
}

/** Split-conformal corrections in working days, per stage × daypart × level (80, 90). */
type Corrections = Int8Array;
const correctionIndex = (stage: number, daypart: number, level: 0 | 1) => (stage * DAYPARTS + daypart) * 2 + level;

/** Scores range over −MAX_K..MAX_K. */
const SCORE_BINS = 2 * MAX_K + 1;

function correctionOf(histogram: Int32Array, offset: number, alpha: number): number {
  let n = 0;
  for (let i = 0; i < SCORE_BINS; i++) n += histogram[offset + i]!;
  // Too few to calibrate on: the empirical window stands as it is.
  if (n < MIN_DELIVERIES) return 0;
  const rank = Math.min(n, Math.ceil((n + 1) * alpha));
  let seen = 0;
  for (let i = 0; i < SCORE_BINS; i++) {
    seen += histogram[offset + i]!;
    if (seen >= rank) return i - MAX_K;
  }
  return 0;
}

function applied(window: readonly [number, number], c: number, mode: number): [number, number] {
  let a = Math.max(0, window[0] - c);
  let b = Math.max(0, window[1] + c);
  if (a > b) a = b = Math.min(Math.max(mode, window[0]), window[1]);
  return [a, b];
}

export interface ModelSummary {
  modelAt: string;
  shipments: number;
  observations: number;
  cells: number;
  /** Corrections in working days per stage and daypart: [p80, p90]. */
  corrections: Record<string, [number, number][]>;
}

/** Precomputed tables and the lookup over them. */
export class PredictionModel {
  private readonly modelAtIso: string;
  private readonly servicesMemo = new Map<string, Map<string, (string | null)[]>>();

  constructor(
    private readonly cells: CellTable,
    private readonly corrections: Corrections,
    readonly modelAtMs: number,
    private readonly places: PlaceLookup,
    private readonly workdays: WorkdayIndex,
    readonly summary: ModelSummary,
  ) {
    this.modelAtIso = new Date(modelAtMs).toISOString();
  }

  /**
   * Carriers of `mode` with cells for `stage`, each with the service types learned (as keyed: lower
   * case; null for shipments that showed none), sorted. `/v1/estimate` asks every one of them.
   */
  learnedServices(mode: KeyMode, stage: Stage): Map<string, (string | null)[]> {
    const memoKey = `${mode}|${stage}`;
    let found = this.servicesMemo.get(memoKey);
    if (found) return found;
    const sets = new Map<string, Set<string>>();
    for (const key of this.cells.keys()) {
      // Carrier-level keys of one service type: mode|carrier|service|C|stage (service '*' is any).
      const parts = key.split('|');
      if (parts.length !== 5 || parts[0] !== mode || parts[3] !== 'C' || parts[4] !== stage || parts[2] === '*') continue;
      let set = sets.get(parts[1]!);
      if (!set) sets.set(parts[1]!, (set = new Set()));
      set.add(parts[2]!);
    }
    found = new Map([...sets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([carrier, set]) => [carrier, [...set].sort().map((s) => (s === '-' ? null : s))]));
    this.servicesMemo.set(memoKey, found);
    return found;
  }

  /** The prediction as of `q.asOfMs`, null where the contract says null. */
  predict(q: PredictionQuery): Prediction | null {
    const stageIndex = STAGE_INDEX.get(q.stage);
    if (stageIndex === undefined) return null;
    const keys = levelKeys(q.mode, q.carrier, q.serviceType, q.originPincode, q.destinationPincode, this.places);
    const elapsedHours = Math.max(0, q.asOfMs - q.stageEnteredMs) / HOUR_MS;
    const found = cellFor(this.cells, keys, q.stage, bucketOf(elapsedHours));
    if (!found) return null;
    const { cell, level } = found;
    const daypart = daypartOf(q.asOfMs);
    const c80 = this.corrections[correctionIndex(stageIndex, daypart, 0)]!;
    const c90 = this.corrections[correctionIndex(stageIndex, daypart, 1)]!;
    const w80 = applied(cell.p80, c80, cell.mode);
    const w90 = applied(cell.p90, c90, cell.mode);
    // The 90 % window holds the 80 % one whatever the corrections did.
    if (w90[0] > w80[0]) w90[0] = w80[0];
    if (w90[1] < w80[1]) w90[1] = w80[1];
    const context = this.workdays.contextOf(q.carrier, q.destinationState);
    const asOfDay = dayNumberOf(q.asOfMs);
    const day = (k: number) => dayText(this.workdays.add(context, asOfDay, k));
    let onTime: number | null = null;
    if (q.eddMs !== null) {
      const eddDay = dayNumberOf(q.eddMs);
      if (eddDay < asOfDay) onTime = 0;
      else {
        const k = this.workdays.between(context, asOfDay, eddDay);
        onTime = Math.round(cell.cdf[Math.min(k, MAX_K)]! * 1000) / 1000;
      }
    }
    return {
      delivery_date: day(Math.min(Math.max(cell.mode, w80[0]), w80[1])),
      window: { p80: [day(w80[0]), day(w80[1])], p90: [day(w90[0]), day(w90[1])] },
      on_time_probability: onTime,
      basis: { level, sample_size: cell.n, stage: q.stage, model_at: this.modelAtIso },
    };
  }
}

/** An empty model: answers null until the first build. */
export function emptyModel(places: PlaceLookup, workdays: WorkdayIndex, modelAtMs = 0): PredictionModel {
  return new PredictionModel(new Map(), new Int8Array(STAGE_LIST.length * DAYPARTS * 2), modelAtMs, places, workdays, { modelAt: new Date(modelAtMs).toISOString(), shipments: 0, observations: 0, cells: 0, corrections: {} });
}

/**
 * Learns the model from delivered shipments (any order, each once). Two passes: the first learns
 * from observations before the calibration window and scores that model's windows on the window's
 * observations (the split-conformal step); the second learns from all, and the corrections apply.
 */
export function buildModel(shipments: Iterable<DeliveredShipment>, options: BuildOptions): PredictionModel {
  const resolvedEnd = options.modelAtMs - (options.resolveDays ?? 7) * DAY_MS;
  const start = options.modelAtMs - options.windowDays * DAY_MS;
  const calibrationStart = resolvedEnd - (options.calibrationDays ?? 14) * DAY_MS;
  const list: { s: DeliveredShipment; keys: (string | null)[] }[] = [];
  for (const s of shipments) {
    if (s.deliveredMs > options.modelAtMs) continue;
    list.push({ s, keys: levelKeys(s.mode, s.carrier, s.serviceType, s.originPincode, s.destinationPincode, options.places) });
  }
  const add = (table: CountTable, o: Observation) => {
    for (const key of o.keys) if (key !== null) addCount(table, `${key}|${o.stage}`, o.bucket, o.k);
  };
  // Pass 1: before the calibration window.
  const early: CountTable = new Map();
  let observations = 0;
  for (const { s, keys } of list) {
    observe(s, keys, options.workdays, (o) => {
      if (o.asOfMs < start || o.asOfMs >= calibrationStart) return;
      observations++;
      add(early, o);
    });
  }
  const earlyCells = finishAll(early);
  // Scores of the early model on the calibration window: how far outside each window the day fell.
  const histogram = new Int32Array(STAGE_LIST.length * DAYPARTS * 2 * SCORE_BINS);
  const all = early;
  for (const { s, keys } of list) {
    observe(s, keys, options.workdays, (o) => {
      if (o.asOfMs < calibrationStart || o.asOfMs >= resolvedEnd) return;
      observations++;
      add(all, o);
      const found = cellFor(earlyCells, o.keys, o.stage, o.bucket);
      if (!found) return;
      const stage = STAGE_INDEX.get(o.stage)!;
      const part = daypartOf(o.asOfMs);
      const score = (w: readonly [number, number]) => Math.max(w[0] - o.k, o.k - w[1]) + MAX_K;
      histogram[correctionIndex(stage, part, 0) * SCORE_BINS + score(found.cell.p80)]!++;
      histogram[correctionIndex(stage, part, 1) * SCORE_BINS + score(found.cell.p90)]!++;
    });
  }
  const corrections = new Int8Array(STAGE_LIST.length * DAYPARTS * 2);
  const summaryCorrections: Record<string, [number, number][]> = {};
  STAGE_LIST.forEach((stage, si) => {
    summaryCorrections[stage] = [];
    for (let p = 0; p < DAYPARTS; p++) {
      const c80 = correctionOf(histogram, correctionIndex(si, p, 0) * SCORE_BINS, 0.8);
      const c90 = correctionOf(histogram, correctionIndex(si, p, 1) * SCORE_BINS, 0.9);
      corrections[correctionIndex(si, p, 0)] = c80;
      corrections[correctionIndex(si, p, 1)] = c90;
      summaryCorrections[stage]!.push([c80, c90]);
    }
  });
  const cells = finishAll(all);
  return new PredictionModel(cells, corrections, options.modelAtMs, options.places, options.workdays, {
    modelAt: new Date(options.modelAtMs).toISOString(),
    shipments: list.length,
    observations,
    cells: cells.size,
    corrections: summaryCorrections,
  });
}
