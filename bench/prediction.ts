/**
 * npm run bench -- prediction: the delivery model's figures (issue 31, contracts.md "Delivery prediction").
 * 1. The backtest on a generated history of BENCH_PREDICTION_JOURNEYS (default 200,000) journeys of
 *    the sandbox's network (lib/sandbox historyPolls, 90 days, split at day 75), and the same on the
 *    second generator (lib/prediction/testutil/other-network.ts), which shares none of its parameters:
 *    issue 39's targets overall and in every stage (coverage), in transit at the destination and out
 *    for delivery (width, the day itself), exact day and error against the EDD and the lane median.
 * 2. The rebuild over BENCH_PREDICTION_REBUILD (default 1,000,000) delivered shipments: embedded
 *    (observations kept per shipment, then buildFromObserved: what PredictionBook.rebuild runs), and
 *    in ClickHouse (rebuildPredictionModel over prediction_observations) when CLICKHOUSE_URL is set.
 * 3. The cost a prediction adds to a cached lookup: predictRecord on a cached record, per call.
 * The load average is printed first: figures from a busy machine are not the quiet machine's.
 */
import { loadavg } from 'node:os';
import { loadCalendar } from '../lib/calendar/index.ts';
import { createClickHouseClient, migrate, observationRows, rebuildPredictionModel, resolveTarget } from '../lib/clickhouse/index.ts';
import { sqlIdentifier } from '../lib/clickhouse/sql.ts';
import { loadNetworkConfig } from '../lib/network/config.ts';
import { normalizePoll } from '../lib/normalize/index.ts';
import { loadPlaces } from '../lib/places/index.ts';
import { backtest, buildFromObserved, observeShipment, placeLookupOf, predictorOf, WorkdayIndex, type BacktestSummary, type DeliveredShipment, type ObservedShipment, type PredictionModel } from '../lib/prediction/index.ts';
import { queryFactsOf } from '../lib/prediction/records.ts';
import { otherNetworkPolls } from '../lib/prediction/testutil/other-network.ts';
import { loadProduct } from '../lib/product/index.ts';
import { historyPolls } from '../lib/sandbox/history.ts';
import type { CarrierPoll } from '../lib/schemas/index.ts';
import { DAY_MS, HOUR_MS } from '../lib/time/index.ts';
import { formatBacktest } from '../apps/cli/commands/predict.ts';
import { oracleFloor } from './prediction-floor.ts';
import { lawFloor } from './prediction-law-floor.ts';
import type { BenchResult } from './report.ts';

const JOURNEYS = Number(process.env.BENCH_PREDICTION_JOURNEYS ?? 200_000);
const REBUILD = Number(process.env.BENCH_PREDICTION_REBUILD ?? 1_000_000);
const WINDOW_DAYS = 90;

const calendar = loadCalendar();
const directory = loadPlaces();
const places = placeLookupOf(directory);
const product = loadProduct();

/** Issue 39's targets, overall and in every stage (a stage with no scored prediction is left out). */
function scoreRows(label: string, s: BacktestSummary): BenchResult[] {
  const r = (name: string, value: number | null, unit: string, target: string | null, pass: boolean | null): BenchResult => ({ name: `${label}: ${name}`, value: value ?? NaN, unit, target, pass });
  const within = (v: number | null, low: number, high: number) => v !== null && v >= low && v <= high;
  const rows: BenchResult[] = [];
  // A window is at least one day: where the predicted day alone holds more than the band's top (out
  // for delivery: ~95 % delivered that day), no window can cover less, so coverage above the band
  // at a one-day median width is the data's sharpness, not a miscalibration; below the band never passes.
  const covered = (v: number | null, low: number, high: number, width: number | null) => within(v, low, high) || (v !== null && v > high && width === 1);
  const band = (range: string) => `${range} (above: only at one-day width)`;
  for (const [stage, x] of [['overall', s.overall] as const, ...Object.entries(s.by_stage)]) {
    if (x.predictions === 0) continue;
    rows.push(
      r(`${stage}: p80 coverage (${x.predictions} scored, median width ${x.p80_median_width_days ?? '—'} d)`, x.p80_coverage, '', band('0.78–0.90'),
        covered(x.p80_coverage, 0.78, 0.9, x.p80_median_width_days)),
      r(`${stage}: p90 coverage (median width ${x.p90_median_width_days ?? '—'} d)`, x.p90_coverage, '', band('0.88–0.96'),
        covered(x.p90_coverage, 0.88, 0.96, x.p90_median_width_days)),
    );
  }
  const o = s.overall;
  const edd = o.carrier_edd;
  const lane = o.lane_benchmark;
  const ofd = s.by_stage.out_for_delivery;
  const atDestination = s.in_transit_by_position.destination_city;
  rows.push(
    r('in transit at the destination city: median p80 width', atDestination?.p80_median_width_days ?? null, 'days', '<= 2',
      atDestination?.p80_median_width_days != null && atDestination.p80_median_width_days <= 2),
    r('out for delivery: median p80 width', ofd?.p80_median_width_days ?? null, 'days', '<= 1', ofd?.p80_median_width_days != null && ofd.p80_median_width_days <= 1),
    r('out for delivery: predicted for that day', ofd?.exact_day_rate ?? null, '', '>= 0.80', ofd?.exact_day_rate != null && ofd.exact_day_rate >= 0.8),
    r('exact day', o.exact_day_rate, '', '>= 0.50 and >= EDD + 0.25', o.exact_day_rate !== null && edd.exact_day_rate !== null
      && o.exact_day_rate >= 0.5 && o.exact_day_rate >= edd.exact_day_rate + 0.25),
    r('carrier EDD exact day', edd.exact_day_rate, '', null, null),
    r('MAE', o.mean_absolute_error_days, 'days', '<= 0.80, < EDD and lane median', o.mean_absolute_error_days !== null && edd.mean_absolute_error_days !== null
      && lane.mean_absolute_error_days !== null && o.mean_absolute_error_days <= 0.8 && o.mean_absolute_error_days < edd.mean_absolute_error_days
      && o.mean_absolute_error_days < lane.mean_absolute_error_days),
    r('carrier EDD MAE', edd.mean_absolute_error_days, 'days', null, null),
    r('lane median MAE', lane.mean_absolute_error_days, 'days', null, null),
    r('in-transit polls predicted', s.in_transit_predicted_share, '', '>= 0.95', s.in_transit_predicted_share !== null && s.in_transit_predicted_share >= 0.95),
  );
  return rows;
}

async function sandboxBacktest(): Promise<{ rows: BenchResult[]; model: PredictionModel; poll: CarrierPoll | null }> {
  const endMs = Date.parse('2026-06-01T00:00:00+05:30');
  const options = { shipments: JOURNEYS, days: 90, seed: 31, endMs, config: loadNetworkConfig(), calendar, places: directory };
  // Generated twice (learn, predict) rather than held: 200,000 journeys are ~700,000 polls.
  async function* polls(): AsyncGenerator<CarrierPoll> {
    for await (const { polls: journey } of historyPolls(options as Parameters<typeof historyPolls>[0])) yield* journey;
  }
  const started = Date.now();
  const { summary, model } = await backtest(polls, { splitMs: endMs - 15 * DAY_MS, rules: product.rules, places, workdays: new WorkdayIndex(calendar), windowDays: WINDOW_DAYS });
  console.log(`\nSandbox network, ${JOURNEYS} journeys (${((Date.now() - started) / 1000).toFixed(1)} s):\n${formatBacktest(summary)}`);
  return { rows: scoreRows(`sandbox network, ${JOURNEYS} journeys`, summary), model, poll: null };
}

async function otherBacktest(): Promise<{ rows: BenchResult[]; model: PredictionModel; polls: CarrierPoll[] }> {
  const startMs = Date.parse('2026-03-01T00:00:00+05:30');
  const polls = () => otherNetworkPolls({ shipments: JOURNEYS, days: 90, seed: 37, calendar, startMs });
  const started = Date.now();
  const { summary, model } = await backtest(polls, { splitMs: startMs + 75 * DAY_MS, rules: product.rules, places, workdays: new WorkdayIndex(calendar), windowDays: WINDOW_DAYS });
  console.log(`\nSecond generator, ${JOURNEYS} journeys (${((Date.now() - started) / 1000).toFixed(1)} s):\n${formatBacktest(summary)}`);
  const sample = [...otherNetworkPolls({ shipments: 200, days: 90, seed: 37, calendar, startMs })];
  const history = { shipments: JOURNEYS, days: 90, seed: 37, calendar, startMs, splitMs: startMs + 75 * DAY_MS };
  const floor = oracleFloor(history);
  // One shipment in n, about 25,000 of them: the floor's draws cost ~3 ms a poll.
  const law = lawFloor({ ...history, everyNth: Math.max(1, Math.round(JOURNEYS / 25_000)), draws: 200 });
  const label = `second generator, ${JOURNEYS} journeys`;
  const row = (name: string, value: number, unit = ''): BenchResult => ({ name: `${label}: ${name}`, value: Number(value.toFixed(unit ? 3 : 4)), unit, target: null, pass: null });
  const floorRows: BenchResult[] = [
    row(`floor, an oracle told each arrival at the destination hub (${floor.polls} scored): exact day`, floor.exactDayRate),
    row(`floor, that oracle's MAE`, floor.meanAbsoluteErrorDays, 'days'),
    row(`floor, the generator's own law given each poll (${law.polls} scored, ${law.unexplained} unexplained): exact day (its mode)`, law.exactDayRate),
    row(`floor, the generator's own law: MAE (its median)`, law.meanAbsoluteErrorDays, 'days'),
    ...Object.entries(law.byStage).map(([stage, part]) => row(`floor, the generator's own law, ${stage} (${part.polls}): MAE`, part.meanAbsoluteErrorDays, 'days')),
  ];
  return { rows: [...scoreRows(label, summary), ...floorRows], model, polls: sample };
}

/** Delivered shipments spread over real pincodes, carriers and 90 days: the rebuild's input. */
function* syntheticDelivered(count: number, modelAtMs: number): Generator<DeliveredShipment> {
  const pins = directory.all().filter((_, i) => i % 97 === 0).map((p) => p.pincode);
  const carriers = ['delhivery', 'bluedart', 'dtdc', 'ekart', 'xpressbees', 'shadowfax'];
  let seed = 12345;
  const r = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  for (let i = 0; i < count; i++) {
    const pickup = modelAtMs - 95 * DAY_MS + r() * 92 * DAY_MS;
    const ofd = pickup + (20 + 100 * r()) * HOUR_MS;
    const delivered = ofd + (1 + 8 * r()) * HOUR_MS;
    // Where the scans were (position.ts codes): the origin, en route, the destination city, the branch.
    const arrived = ofd - (4 + 12 * r()) * HOUR_MS;
    yield {
      scanMs: [pickup, (pickup + arrived) / 2, arrived, ofd], scanPositions: [1, 2, 4, 5],
      mode: 'live', carrier: carriers[i % carriers.length]!, serviceType: r() < 0.3 ? 'express' : 'surface',
      originPincode: pins[Math.floor(r() * 30)]!, destinationPincode: pins[Math.floor(r() * pins.length)]!, destinationState: null,
      deliveredMs: Math.floor(delivered / 1000) * 1000, seed: i,
      episodes: [
        { stage: 'awaiting_pickup', enteredMs: pickup - 18 * HOUR_MS, leftMs: pickup },
        { stage: 'in_transit', enteredMs: pickup, leftMs: ofd },
        { stage: 'out_for_delivery', enteredMs: ofd, leftMs: delivered },
      ],
    };
  }
}

async function rebuilds(): Promise<BenchResult[]> {
  const modelAtMs = Date.parse('2026-06-01T12:00:00+05:30');
  const workdays = new WorkdayIndex(calendar);
  let started = Date.now();
  const observed: ObservedShipment[] = [];
  // Each distinct level key one string, as the book holds them (lib/prediction/book.ts levelKeys)
  // and hands them to the rebuild: a string the rebuild has hashed once is not hashed again.
  const interned = new Map<string, string>();
  const intern = (key: string | null): string | null => {
    if (key === null) return null;
    let held = interned.get(key);
    if (held === undefined) interned.set(key, (held = key));
    return held;
  };
  for (const d of syntheticDelivered(REBUILD, modelAtMs)) {
    const o = observeShipment(d, places, workdays);
    observed.push({ ...o, keys: o.keys.map(intern) });
  }
  const observeS = (Date.now() - started) / 1000;
  started = Date.now();
  const model = buildFromObserved(observed, { modelAtMs, windowDays: WINDOW_DAYS, places, workdays });
  const rebuildS = (Date.now() - started) / 1000;
  const results: BenchResult[] = [
    { name: `embedded: observations of ${REBUILD} delivered (as they arrive)`, value: Number(observeS.toFixed(2)), unit: 's', target: null, pass: null },
    { name: `embedded: rebuild over ${REBUILD} delivered (${model.summary.cells} cells)`, value: Number(rebuildS.toFixed(2)), unit: 's', target: '<= 30', pass: rebuildS <= 30 },
  ];
  const url = process.env.CLICKHOUSE_URL;
  if (url) {
    const target = resolveTarget(url, 'tracking_bench_prediction');
    const admin = createClickHouseClient({ url: target.url });
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(target.database)}` });
    await admin.close();
    await migrate(target);
    const client = createClickHouseClient(target, { request_timeout: 600_000 });
    let batch: Record<string, unknown>[] = [];
    let i = 0;
    for (const d of syntheticDelivered(REBUILD, modelAtMs)) {
      batch.push(...observationRows(d, `B${i++}`, places, workdays));
      if (batch.length >= 200_000) { await client.insert({ table: 'prediction_observations', format: 'JSONEachRow', values: batch }); batch = []; }
    }
    if (batch.length) await client.insert({ table: 'prediction_observations', format: 'JSONEachRow', values: batch });
    const steps: BenchResult[] = [];
    const onStep = (name: string, ms: number) => steps.push({ name: `  ClickHouse rebuild step: ${name}`, value: Number((ms / 1000).toFixed(2)), unit: 's', target: null, pass: null });
    const r = await rebuildPredictionModel(client, { nowMs: modelAtMs, windowDays: WINDOW_DAYS, timeoutMs: 600_000, onStep });
    results.push({ name: `ClickHouse: rebuild over ${REBUILD} delivered (${r.cells} cells)`, value: Number((r.durationMs / 1000).toFixed(2)), unit: 's', target: '<= 60', pass: r.durationMs <= 60_000 }, ...steps);
    await client.close();
    const drop = createClickHouseClient({ url: target.url });
    await drop.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(target.database)}` });
    await drop.close();
  }
  return results;
}

/**
 * What a prediction adds to a cached lookup: predictFacts on the query facts a cache entry holds
 * (lib/cache/entry.ts reads them from the record once, when the record is cached).
 */
function lookupCost(model: PredictionModel, polls: readonly CarrierPoll[]): BenchResult[] {
  const records = polls.map((p) => normalizePoll(p, product.rules)).flatMap((r) => (r.kind === 'found' && r.shipment.facts.stage === 'in_transit' ? [r.shipment] : []))
    .map((s) => ({ query: queryFactsOf(s.record, s.facts, places), facts: s.facts }));
  const predictor = predictorOf(() => model, places);
  const now = model.modelAtMs + HOUR_MS;
  const rounds = 400_000;
  let hits = 0;
  for (let i = 0; i < 20_000; i++) { const s = records[i % records.length]!; if (predictor.predictFacts(s.query, s.facts, 'live', now)) hits++; }
  const started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) { const s = records[i % records.length]!; if (predictor.predictFacts(s.query, s.facts, 'live', now)) hits++; }
  const us = Number(process.hrtime.bigint() - started) / 1000 / rounds;
  return [{ name: `prediction on a cached lookup (${records.length} records, ${hits > 0 ? 'predicted' : 'none predicted'})`, value: Number(us.toFixed(3)), unit: 'µs', target: '<= 2', pass: us <= 2 }];
}

export async function benchPrediction(): Promise<BenchResult[]> {
  const [one, five, fifteen] = loadavg();
  const results: BenchResult[] = [{ name: 'load average (1, 5, 15 min): 1 min shown', value: Number(one!.toFixed(2)), unit: `(${five!.toFixed(2)}, ${fifteen!.toFixed(2)})`, target: null, pass: null }];
  // BENCH_PREDICTION_ONLY=rebuild: the rebuild leg alone (e.g. under --cpu-prof).
  if (process.env.BENCH_PREDICTION_ONLY === 'rebuild') return [...results, ...(await rebuilds())];
  if (process.env.BENCH_PREDICTION_ONLY === 'lookup') { const other = await otherBacktest(); return [...results, ...lookupCost(other.model, other.polls)]; }
  // BENCH_PREDICTION_ONLY=backtest: the figures of both generators, no timing (a busy machine's are fine).
  if (process.env.BENCH_PREDICTION_ONLY === 'backtest') return [...results, ...(await sandboxBacktest()).rows, ...(await otherBacktest()).rows];
  results.push(...(await sandboxBacktest()).rows);
  const other = await otherBacktest();
  results.push(...other.rows);
  results.push(...(await rebuilds()));
  results.push(...lookupCost(other.model, other.polls));
  return results;
}
