/**
 * The backtest (contracts.md "Delivery prediction", `predict backtest`): learn from the polls before
 * the split, predict as of every poll at or after it, and score the predictions of shipments that
 * were later delivered against the carrier's EDD and the lane benchmark. No I/O: polls arrive as a
 * re-readable stream (read twice: once to learn, once to predict), lines leave through a callback.
 */
import { BENCHMARK_MIN_SAMPLE } from '../insights/index.ts';
import { closureOfShipment, LaneBook } from '../lanes/index.ts';
import { normalizePoll, type RuleSet } from '../normalize/index.ts';
import type { CarrierPoll, Stage } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';
import { buildModel, type DeliveredShipment, type PredictionModel } from './model.ts';
import { deliveredShipmentOf, queryOf } from './records.ts';
import { POSITIONS } from './position.ts';
import type { PlaceLookup, Prediction } from './types.ts';
import { dayNumberOf, dayNumberOfText, type WorkdayIndex } from './workdays.ts';

/** One line of `--predictions`. */
export interface PredictionLine {
  carrier: string;
  awb: string;
  as_of: string;
  stage: Stage;
  prediction: Prediction | null;
}

export interface Scores {
  /** Predictions of later-delivered shipments scored. */
  predictions: number;
  p80_coverage: number | null;
  p90_coverage: number | null;
  /** Median width of the windows in days, both ends counted (a one-day window is 1). */
  p80_median_width_days: number | null;
  p90_median_width_days: number | null;
  exact_day_rate: number | null;
  mean_absolute_error_days: number | null;
  carrier_edd: { polls: number; exact_day_rate: number | null; mean_absolute_error_days: number | null };
  lane_benchmark: { polls: number; exact_day_rate: number | null; mean_absolute_error_days: number | null };
}

export interface BacktestSummary {
  split: string;
  model_at: string;
  trained_on_shipments: number;
  polls_before_split: number;
  polls_at_or_after_split: number;
  /** Polls of moving shipments (in transit, out for delivery, after a failed attempt, held) with a prediction. */
  in_transit_polls: number;
  in_transit_predicted_share: number | null;
  overall: Scores;
  by_stage: Record<string, Scores>;
  /** In-transit polls by where the parcel was (position.ts): the destination's own are the sharpest. */
  in_transit_by_position: Record<string, Scores>;
  /** What makes these figures weak or empty (no polls before the split, few predictions scored), in words. */
  warnings: string[];
}

/** Fewer scored predictions than this make a warning: coverage then moves by points from run to run. */
export const MIN_SCORED = 500;

export interface BacktestOptions {
  splitMs: number;
  rules: RuleSet;
  places: PlaceLookup;
  workdays: WorkdayIndex;
  /** The window the model learns from, in days (LANE_WINDOW_DAYS). */
  windowDays: number;
  onPrediction?: (line: PredictionLine) => void;
  /** Called with the polls read so far in each phase. */
  onProgress?: (phase: 'learn' | 'predict', polls: number) => void;
}

const MOVING: ReadonlySet<Stage> = new Set(['in_transit', 'out_for_delivery', 'delivery_attempted', 'exception']);

interface Scored {
  shipment: string;
  stage: Stage;
  position: string;
  p: [number, number, number, number, number] | null;
  edd: number | null;
  bench: number | null;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}

const rate = (hits: number, n: number) => (n === 0 ? null : Math.round((hits / n) * 10_000) / 10_000);
const mean = (sum: number, n: number) => (n === 0 ? null : Math.round((sum / n) * 1000) / 1000);

function score(items: readonly Scored[], delivered: ReadonlyMap<string, number>): Scores {
  let n = 0, in80 = 0, in90 = 0, exact = 0, abs = 0;
  const w80: number[] = [];
  const w90: number[] = [];
  let eddN = 0, eddExact = 0, eddAbs = 0, benchN = 0, benchExact = 0, benchAbs = 0;
  for (const it of items) {
    const day = delivered.get(it.shipment);
    if (day === undefined) continue;
    if (it.p) {
      const [mode, a80, b80, a90, b90] = it.p;
      n++;
      if (day >= a80 && day <= b80) in80++;
      if (day >= a90 && day <= b90) in90++;
      if (day === mode) exact++;
      abs += Math.abs(day - mode);
      w80.push(b80 - a80 + 1);
      w90.push(b90 - a90 + 1);
    }
    if (it.edd !== null) { eddN++; if (it.edd === day) eddExact++; eddAbs += Math.abs(day - it.edd); }
    if (it.bench !== null) { benchN++; if (it.bench === day) benchExact++; benchAbs += Math.abs(day - it.bench); }
  }
  return {
    predictions: n,
    p80_coverage: rate(in80, n),
    p90_coverage: rate(in90, n),
    p80_median_width_days: median(w80),
    p90_median_width_days: median(w90),
    exact_day_rate: rate(exact, n),
    mean_absolute_error_days: mean(abs, n),
    carrier_edd: { polls: eddN, exact_day_rate: rate(eddExact, eddN), mean_absolute_error_days: mean(eddAbs, eddN) },
    lane_benchmark: { polls: benchN, exact_day_rate: rate(benchExact, benchN), mean_absolute_error_days: mean(benchAbs, benchN) },
  };
}

/** Runs the backtest over `polls()` (called twice; both reads must yield the same polls). */
export async function backtest(
  polls: () => AsyncIterable<CarrierPoll> | Iterable<CarrierPoll>, options: BacktestOptions,
): Promise<{ summary: BacktestSummary; model: PredictionModel }> {
  const { splitMs, rules, places } = options;
  // Learn: the newest poll before the split of each shipment decides what was known of it.
  const known = new Map<string, { polledMs: number; delivered: DeliveredShipment | null }>();
  const lanes = new LaneBook({ windowDays: options.windowDays, clock: () => splitMs, ttlMs: Number.POSITIVE_INFINITY });
  let before = 0;
  let read = 0;
  let firstMs = Number.POSITIVE_INFINITY;
  let lastMs = Number.NEGATIVE_INFINITY;
  for await (const poll of polls()) {
    if (++read % 5000 === 0) options.onProgress?.('learn', read);
    const polledMs = Date.parse(poll.polled_at);
    if (polledMs < firstMs) firstMs = polledMs;
    if (polledMs > lastMs) lastMs = polledMs;
    if (!(polledMs < splitMs)) continue;
    before++;
    const key = `${poll.carrier}:${poll.awb}`;
    const seen = known.get(key);
    if (seen && seen.polledMs >= polledMs) continue;
    const result = normalizePoll(poll, rules);
    if (result.kind !== 'found') continue;
    const { record, facts } = result.shipment;
    known.set(key, { polledMs, delivered: deliveredShipmentOf(record, facts, 'live', places) });
    const closure = closureOfShipment(result.shipment, 'live', polledMs);
    if (closure) lanes.add(closure);
  }
  const model = buildModel(
    (function* () { for (const k of known.values()) if (k.delivered) yield k.delivered; })(),
    { modelAtMs: splitMs, windowDays: options.windowDays, places, workdays: options.workdays },
  );
  known.clear();

  // Predict as of every poll at or after the split; remember what is needed to score it.
  const scored: Scored[] = [];
  const delivered = new Map<string, number>();
  let after = 0, moving = 0, movingPredicted = 0;
  read = 0;
  for await (const poll of polls()) {
    if (++read % 5000 === 0) options.onProgress?.('predict', read);
    const polledMs = Date.parse(poll.polled_at);
    if (!(polledMs >= splitMs)) continue;
    after++;
    const result = normalizePoll(poll, rules);
    if (result.kind !== 'found') continue;
    const { record, facts } = result.shipment;
    const key = `${record.carrier}:${record.awb}`;
    if (facts.stage === 'delivered' && facts.terminal_at_ms !== null) delivered.set(key, dayNumberOf(facts.terminal_at_ms));
    const q = queryOf(record, facts, 'live', polledMs, places);
    const prediction = q === null ? null : model.predict(q);
    options.onPrediction?.({ carrier: record.carrier, awb: record.awb, as_of: poll.polled_at, stage: facts.stage, prediction });
    if (MOVING.has(facts.stage)) { moving++; if (prediction) movingPredicted++; }
    if (facts.stage === 'delivered' || facts.stage === 'rto_in_transit' || facts.stage === 'rto_delivered' || facts.stage === 'cancelled') continue;
    const lane = facts.lane ? lanes.statsOf(facts.lane) : null;
    const bench = lane && lane.p50_transit_days !== null && lane.sample_size >= BENCHMARK_MIN_SAMPLE && facts.first_physical_scan_ms !== null
      ? dayNumberOf(facts.first_physical_scan_ms + lane.p50_transit_days * DAY_MS)
      : null;
    scored.push({
      shipment: key,
      stage: facts.stage,
      p: prediction === null ? null : [
        dayNumberOfText(prediction.delivery_date),
        dayNumberOfText(prediction.window.p80[0]), dayNumberOfText(prediction.window.p80[1]),
        dayNumberOfText(prediction.window.p90[0]), dayNumberOfText(prediction.window.p90[1]),
      ],
      edd: record.estimated_delivery_at === null ? null : dayNumberOf(Date.parse(record.estimated_delivery_at)),
      bench,
      position: q?.position ?? 'unknown',
    });
  }
  const byStage: Record<string, Scores> = {};
  for (const stage of [...new Set(scored.map((s) => s.stage))].sort()) byStage[stage] = score(scored.filter((s) => s.stage === stage), delivered);
  const inTransit = scored.filter((s) => s.stage === 'in_transit');
  const byPosition: Record<string, Scores> = {};
  for (const position of POSITIONS) {
    const of = inTransit.filter((s) => s.position === position);
    if (of.length > 0) byPosition[position] = score(of, delivered);
  }
  const overall = score(scored, delivered);
  const span = read === 0 ? 'no polls at all' : `the polls run from ${new Date(firstMs).toISOString()} to ${new Date(lastMs).toISOString()}`;
  const warnings: string[] = [];
  if (before === 0) warnings.push(`no polls before --split ${new Date(splitMs).toISOString()}: the model had nothing to learn from (${span})`);
  else if (model.summary.shipments === 0) warnings.push(`no shipment delivered before --split among ${before} polls: the model had nothing to learn from`);
  if (after === 0) warnings.push(`no polls at or after --split ${new Date(splitMs).toISOString()}: nothing to predict (${span})`);
  if (overall.predictions < MIN_SCORED) {
    warnings.push(`only ${overall.predictions} predictions scored (fewer than ${MIN_SCORED}): figures this thin move by several points from run to run; ` +
      `a longer history or a --split with more polls after it scores more (${span})`);
  }
  return {
    model,
    summary: {
      split: new Date(splitMs).toISOString(),
      model_at: model.summary.modelAt,
      trained_on_shipments: model.summary.shipments,
      polls_before_split: before,
      polls_at_or_after_split: after,
      in_transit_polls: moving,
      in_transit_predicted_share: rate(movingPredicted, moving),
      overall,
      by_stage: byStage,
      in_transit_by_position: byPosition,
      warnings,
    },
  };
}
