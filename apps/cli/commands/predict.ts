/**
 * `predict backtest` (contracts.md "Delivery prediction"): learns the delivery model from the polls
 * before --split and scores its predictions as of every poll at or after it. Wiring only: the work
 * is lib/prediction/backtest.ts. Sources as replay reads them (lib/replay/sources.ts): a file, the
 * embedded default's log, a Kafka window or ClickHouse's carrier_polls; each is read twice (learn,
 * then predict), so nothing but the model and the scores stays in memory.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { loadCalendar } from '../../../lib/calendar/index.ts';
import { createClickHouseClient, resolveTarget } from '../../../lib/clickhouse/index.ts';
import { loadEnv } from '../../../lib/config/index.ts';
import { createKafka } from '../../../lib/kafka/client.ts';
import { loadPlaces } from '../../../lib/places/index.ts';
import { backtest, placeLookupOf, WorkdayIndex, type BacktestSummary } from '../../../lib/prediction/index.ts';
import { loadProduct } from '../../../lib/product/index.ts';
import { createProgress } from '../../../lib/replay/progress.ts';
import { clickHouseSource, embeddedSource, kafkaSource, lineSource, type SourceItem } from '../../../lib/replay/sources.ts';
import type { CarrierPoll } from '../../../lib/schemas/index.ts';
import { DAY_MS } from '../../../lib/time/index.ts';
import type { RunCommand } from './command.ts';
import { alignedTable, formatPercent as pct } from './format.ts';
import type { CliIo } from './io.ts';

export const PREDICT_USAGE = `Usage: npm run cli -- predict backtest (--polls <file.jsonl> | --from-embedded | --from-kafka | --from-clickhouse)
         --split <ISO> [--since <ISO>] [--until <ISO>] [--predictions <out.jsonl>] [--json]

Learns the delivery model from the polls before --split, predicts as of every poll at or after it,
and scores the predictions of shipments later delivered (coverage of the p80/p90 windows, width,
exact day and mean absolute error, against the carrier EDD and the lane benchmark), by stage.
  --polls <file>        carrier_poll.v1 lines, any order, taken as one network
  --from-embedded       the embedded default's raw-poll log under DATA_DIR
  --from-kafka          the topic tracking.carrier-polls.v1 (KAFKA_BROKERS), --since to --until
  --from-clickhouse     the carrier_polls table (CLICKHOUSE_URL), --since to --until
  --since, --until      stored sources' window (default: LANE_WINDOW_DAYS before --split, to now)
  --predictions <file>  one JSON line per poll at or after --split: { carrier, awb, as_of, stage, prediction }
  --json                the summary as one JSON object on stdout (default: a table)
Examples (a history of the simulated network first, docs/analysts/backtest.md):
  npm run cli -- sandbox history --shipments 20000 --end 2026-06-01T00:00:00+05:30 --out history.jsonl
  npm run cli -- predict backtest --polls history.jsonl --split 2026-05-17T00:00:00+05:30 --predictions p.jsonl
  npm run cli -- predict backtest --from-embedded --split "$(date -u -d '15 days ago' +%FT%TZ)"
A warning (stderr) says when the split leaves nothing to learn from or fewer than 500 predictions to score.
`;

const num = (v: number | null) => (v === null ? '—' : String(v));

/** The summary as a table for a person: one row per stage, then overall. */
export function formatBacktest(s: BacktestSummary): string {
  const header = [
    'stage', 'scored', 'p80 cover', 'p90 cover', 'p80 width', 'p90 width', 'exact day', 'MAE days', 'EDD exact', 'EDD MAE', 'lane exact', 'lane MAE',
  ];
  const rows = [...Object.entries(s.by_stage), ['overall', s.overall] as const].map(([stage, x]) => [
    stage, String(x.predictions), pct(x.p80_coverage), pct(x.p90_coverage), num(x.p80_median_width_days), num(x.p90_median_width_days),
    pct(x.exact_day_rate), num(x.mean_absolute_error_days), pct(x.carrier_edd.exact_day_rate), num(x.carrier_edd.mean_absolute_error_days),
    pct(x.lane_benchmark.exact_day_rate), num(x.lane_benchmark.mean_absolute_error_days),
  ]);
  const positions = Object.entries(s.in_transit_by_position ?? {}).map(([position, x]) => [
    `in_transit @ ${position}`, String(x.predictions), pct(x.p80_coverage), pct(x.p90_coverage), num(x.p80_median_width_days),
    num(x.p90_median_width_days), pct(x.exact_day_rate), num(x.mean_absolute_error_days), pct(x.carrier_edd.exact_day_rate),
    num(x.carrier_edd.mean_absolute_error_days), pct(x.lane_benchmark.exact_day_rate), num(x.lane_benchmark.mean_absolute_error_days),
  ]);
  return [
    `Backtest split at ${s.split}: learned from ${s.trained_on_shipments} delivered shipments (${s.polls_before_split} polls before), ` +
      `${s.polls_at_or_after_split} polls predicted`,
    `In-transit polls with a prediction: ${pct(s.in_transit_predicted_share)} of ${s.in_transit_polls}`,
    '', ...alignedTable(header, rows, (column) => column === 0), '',
    ...(positions.length ? ['In transit, by where the latest scan was:', '', ...alignedTable(header, positions, (column) => column === 0), ''] : []),
    'Widths in days, both ends counted; errors in days against the IST delivery day.', '',
    ...(s.warnings ?? []).map((w) => `Warning: ${w}`),
  ].join('\n');
}

class Usage extends Error {}

/** Runs `predict …`; exit code 0 done, 1 failed, 2 usage error. */
export async function runPredict(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: {
        polls: { type: 'string' }, 'from-embedded': { type: 'boolean' }, 'from-kafka': { type: 'boolean' }, 'from-clickhouse': { type: 'boolean' },
        split: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, predictions: { type: 'string' }, json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    io.stderr(`${(err as Error).message}\n\n${PREDICT_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) { io.stdout(PREDICT_USAGE); return 0; }
  try {
    if (positionals[0] !== 'backtest' || positionals.length !== 1) throw new Usage('predict has one command: backtest');
    const sources = [values.polls !== undefined, values['from-embedded'], values['from-kafka'], values['from-clickhouse']].filter(Boolean).length;
    if (sources !== 1) throw new Usage('give exactly one source: --polls <file>, --from-embedded, --from-kafka or --from-clickhouse');
    if (!values.split || Number.isNaN(Date.parse(values.split))) throw new Usage('--split needs an ISO date-time, e.g. 2026-05-15T00:00:00+05:30');
    const splitMs = Date.parse(values.split);
    for (const name of ['since', 'until'] as const) {
      if (values[name] !== undefined && Number.isNaN(Date.parse(values[name]!))) throw new Usage(`--${name} needs an ISO date-time`);
    }
    return await run(io, { ...values, splitMs } as Values);
  } catch (err) {
    if (err instanceof Usage) { io.stderr(`${err.message}\n\n${PREDICT_USAGE}`); return 2; }
    io.stderr(`predict backtest failed: ${(err as Error).message}\n`);
    return 1;
  }
}

interface Values {
  polls?: string; 'from-embedded'?: boolean; 'from-kafka'?: boolean; 'from-clickhouse'?: boolean;
  since?: string; until?: string; predictions?: string; json?: boolean; splitMs: number;
}

async function run(io: CliIo, values: Values): Promise<number> {
  // Stored sources need more of the environment than the CLI's admin commands (CliEnv).
  const env = loadEnv();
  const product = loadProduct();
  const resolve = (n: string) => product.registry.resolve(n);
  const sinceMs = values.since ? Date.parse(values.since) : values.splitMs - env.LANE_WINDOW_DAYS * DAY_MS;
  const untilMs = values.until ? Date.parse(values.until) : undefined;
  let open: () => AsyncIterable<SourceItem>;
  let close = async () => {};
  if (values.polls !== undefined) {
    const file = values.polls;
    open = () => lineSource(file === '-' ? process.stdin : createReadStream(file), resolve);
  } else if (values['from-embedded']) {
    open = () => embeddedSource(env.DATA_DIR, resolve);
  } else if (values['from-kafka']) {
    if (!env.KAFKA_BROKERS) throw new Usage('--from-kafka needs KAFKA_BROKERS');
    const kafka = createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tracking-predict-backtest' });
    open = () => kafkaSource(kafka, { sinceMs, untilMs }, resolve);
  } else {
    if (!env.CLICKHOUSE_URL) throw new Usage('--from-clickhouse needs CLICKHOUSE_URL');
    const client = createClickHouseClient(resolveTarget(env.CLICKHOUSE_URL));
    open = () => clickHouseSource(client, { since: sinceMs, ...(untilMs === undefined ? {} : { until: untilMs }) });
    close = () => client.close();
  }
  let invalid = 0;
  async function* polls(): AsyncGenerator<CarrierPoll> {
    for await (const item of open()) {
      if (item.kind === 'poll') yield item.poll;
      else invalid++;
    }
  }
  const out = values.predictions ? createWriteStream(values.predictions) : null;
  const progress = createProgress({ enabled: true, label: 'predict backtest' });
  let phase: string | null = null;
  const calendar = loadCalendar();
  try {
    const { summary } = await backtest(polls, {
      splitMs: values.splitMs,
      rules: product.rules,
      places: placeLookupOf(loadPlaces()),
      workdays: new WorkdayIndex(calendar),
      windowDays: env.LANE_WINDOW_DAYS,
      onPrediction: out ? (line) => { out.write(JSON.stringify(line) + '\n'); } : undefined,
      onProgress: (p, n) => { if (p !== phase) { phase = p; progress.phase(p === 'learn' ? 'learning' : 'predicting', null); } progress.update(n); },
    });
    progress.stop();
    if (out) { out.end(); await once(out, 'finish'); }
    if (invalid > 0) io.stderr(`${invalid} invalid lines skipped (twice: both reads)\n`);
    // Also in the summary (`warnings`); on stderr so a piped --json stays one object.
    for (const warning of summary.warnings) io.stderr(`warning: ${warning}\n`);
    io.stdout(values.json ? JSON.stringify(summary) + '\n' : formatBacktest(summary));
    return 0;
  } finally {
    progress.stop();
    await close();
  }
}

export const predictCommand: RunCommand = { words: ['predict'], run: runPredict };
