/**
 * The replay command's options (node:util parseArgs), checked before anything is read or written:
 * a bad option, a missing one or a bad time range is one line on stderr and exit status 2.
 */
import { parseArgs } from 'node:util';
import type { Env } from '../config/index.ts';

export type SourceKind = 'input' | 'embedded' | 'kafka' | 'clickhouse';
export type Against = 'clickhouse' | 'embedded';

export interface ReplayOptions {
  source: SourceKind;
  /** --input: a file or '-' (standard input). */
  input: string | null;
  output: string;
  sinceMs: number | null;
  untilMs: number | null;
  /** --carrier (repeatable): slugs or aliases as given; resolved against config/carriers.yaml later. */
  carriers: string[];
  diff: boolean;
  apply: boolean;
  yes: boolean;
  against: Against;
  baseline: string | null;
  config: string | null;
  dataDir: string;
  topic: string | null;
  database: string | null;
  quiet: boolean;
}

export class UsageError extends Error {}

export const HELP = `npm run replay -- <source> [options]

Replays raw carrier polls (carrier_poll.v1) through the current mapping rules. Without --diff or
--apply, writes one NDJSON line per poll: the tracking record the API would answer (insights as of
the poll's polled_at) plus "poll_id".

Sources (exactly one):
  --input <file|->        NDJSON of carrier_poll.v1 records, or the embedded default's raw-poll log
                          ({"poll": ..., "mode": ...} lines).
                          e.g. npm run replay -- --input data/polls.ndjson --output -
  --from-embedded         the embedded default's log, DATA_DIR/polls.ndjson (see --data-dir).
                          e.g. npm run replay -- --from-embedded --diff
  --from-kafka            the topic tracking.carrier-polls.v1 (KAFKA_BROKERS), by message time;
                          needs --since.
                          e.g. npm run replay -- --from-kafka --since 2026-11-20T00:00:00Z --diff
  --from-clickhouse       carrier_polls (CLICKHOUSE_URL): every poll ever stored; needs --since.
                          Output streams in polled_at order; --diff/--apply go shipment by shipment.
                          e.g. npm run replay -- --from-clickhouse --since 2026-10-01 --until 2026-11-01 --diff

Window and filter:
  --since <ISO>           inclusive start (polled_at; for Kafka the message time). e.g. --since 2026-10-01T00:00:00Z
  --until <ISO>           exclusive end, after --since; default: no end. e.g. --until 2026-11-01
  --carrier <slug>        only this carrier (slug or alias; repeat for more). e.g. --carrier dtdc --carrier ekart

What to do:
  --output <file|->       where records or the diff's JSON line go; default - (stdout). e.g. --output out.ndjson
  --diff                  compare the current rules' events with the stored ones, per carrier and
                          status: a table on stderr, one JSON line on --output. Writes nothing.
                          e.g. npm run replay -- --from-clickhouse --since 2026-10-01 --diff
  --apply                 print the diff, ask for confirmation, then store the current rules' results:
                          ClickHouse (--from-clickhouse): rewrites the window's carrier_polls, events
                          and shipments rows with the new mapping_version, then merges away the
                          replaced rows; resumable (checkpoint in replay_checkpoints) and idempotent.
                          Embedded (--from-embedded): records the rules as the applied mapping in
                          DATA_DIR/replay/applied-mapping.json.
                          e.g. npm run replay -- --from-clickhouse --since 2026-10-01 --apply
  --yes                   apply without asking (needed when standard input is not a terminal).
                          e.g. npm run replay -- --from-embedded --apply --yes
  --against <clickhouse|embedded>
                          what --diff compares with; default: embedded for --from-embedded,
                          clickhouse for --from-kafka/--from-clickhouse, and for --input clickhouse
                          when CLICKHOUSE_URL is set, else embedded. e.g. --input polls.ndjson --diff --against embedded
  --baseline <dir>        embedded only: the config directory whose rules count as stored; default
                          the mapping the last --apply recorded, else config/. e.g. --baseline /tmp/old-config

Settings:
  --config <dir>          the rules to replay with (a copy of config/ holding a changed rule);
                          default CONFIG_DIR, else config/. e.g. --config /tmp/try-config
  --data-dir <dir>        the embedded default's data; default DATA_DIR, else ./data. e.g. --data-dir /srv/tracking
  --database <name>       ClickHouse database; default CLICKHOUSE_DATABASE, a path in CLICKHOUSE_URL,
                          else tracking. e.g. --database tracking_staging
  --topic <name>          Kafka topic; default tracking.carrier-polls.v1. e.g. --topic tracking.carrier-polls.v1
  --quiet                 no progress on stderr (progress: a bar on a terminal, else a line every 10 s).
  --help                  this text.

Exit status: 0 done; 1 some records were invalid, or the apply was declined or interrupted
(run the same command again to resume); 2 usage or configuration error, or --apply without --yes
when standard input is not a terminal.`;

const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function time(value: string | undefined, name: string): number | null {
  if (value === undefined) return null;
  const ms = ISO.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`${name} must be an ISO 8601 date or date-time (e.g. 2026-11-20T00:00:00Z), got "${value}"`);
  return ms;
}

/** `null` when --help was asked for. Throws UsageError with a one-line message otherwise. */
/** The variables replay uses, as `loadEnv()` read them. */
export type ReplayEnv = Partial<Pick<Env, 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'CONFIG_DIR' | 'DATA_DIR'>>;

export function parseReplayOptions(argv: readonly string[], env: ReplayEnv): ReplayOptions | null {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        input: { type: 'string' },
        'from-embedded': { type: 'boolean' },
        'from-kafka': { type: 'boolean' },
        'from-clickhouse': { type: 'boolean' },
        since: { type: 'string' },
        until: { type: 'string' },
        carrier: { type: 'string', multiple: true },
        output: { type: 'string' },
        diff: { type: 'boolean' },
        apply: { type: 'boolean' },
        yes: { type: 'boolean' },
        against: { type: 'string' },
        baseline: { type: 'string' },
        config: { type: 'string' },
        'data-dir': { type: 'string' },
        database: { type: 'string' },
        topic: { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!);
  }
  if (values.help) return null;
  const sources: SourceKind[] = [];
  if (values.input !== undefined) sources.push('input');
  if (values['from-embedded']) sources.push('embedded');
  if (values['from-kafka']) sources.push('kafka');
  if (values['from-clickhouse']) sources.push('clickhouse');
  if (sources.length === 0) {
    throw new UsageError('name a source: --input <file|->, --from-embedded, --from-kafka or --from-clickhouse (--help lists every option)');
  }
  if (sources.length > 1) throw new UsageError(`use one source, not ${sources.map((s) => (s === 'input' ? '--input' : `--from-${s}`)).join(' and ')}`);
  const source = sources[0]!;
  if (values.input === '') throw new UsageError('--input needs a file name or - for standard input');

  const sinceMs = time(values.since, '--since');
  const untilMs = time(values.until, '--until');
  if ((source === 'kafka' || source === 'clickhouse') && sinceMs === null) throw new UsageError(`--from-${source} needs --since <ISO>`);
  if (untilMs !== null && sinceMs !== null && untilMs <= sinceMs) throw new UsageError(`--until (${values.until}) must be after --since (${values.since})`);

  if (values.against !== undefined && values.against !== 'clickhouse' && values.against !== 'embedded') {
    throw new UsageError(`--against must be clickhouse or embedded, got "${values.against}"`);
  }
  const against: Against = (values.against as Against | undefined)
    ?? (source === 'embedded' ? 'embedded' : source === 'input' && !env.CLICKHOUSE_URL ? 'embedded' : 'clickhouse');
  const diff = values.diff ?? false;
  const apply = values.apply ?? false;
  if (values.against !== undefined && !diff && !apply) throw new UsageError('--against goes with --diff or --apply');
  if (source === 'clickhouse' && against === 'embedded') {
    throw new UsageError('--from-clickhouse compares with ClickHouse; use --from-embedded (or --input) for the embedded default');
  }
  if (source === 'embedded' && against === 'clickhouse') {
    throw new UsageError(
      '--from-embedded compares with the embedded default; to compare its log with ClickHouse use --input <DATA_DIR>/polls.ndjson --against clickhouse',
    );
  }
  if (values.baseline !== undefined && against !== 'embedded') {
    throw new UsageError('--baseline is for the embedded default (--from-embedded, or --against embedded)');
  }
  if (apply && source === 'kafka') {
    throw new UsageError('--apply reads ClickHouse\'s carrier_polls (every poll Kafka holds, and older ones): use --from-clickhouse with the same window');
  }
  if (apply && source === 'input' && against === 'clickhouse') {
    throw new UsageError('--apply to ClickHouse reads carrier_polls: use --from-clickhouse (or --against embedded for the embedded default)');
  }
  if (values.yes && !apply) throw new UsageError('--yes goes with --apply');

  return {
    source,
    input: values.input ?? null,
    output: values.output ?? '-',
    sinceMs,
    untilMs,
    carriers: values.carrier ?? [],
    diff,
    apply,
    yes: values.yes ?? false,
    against,
    baseline: values.baseline ?? null,
    config: values.config ?? (env.CONFIG_DIR || null),
    dataDir: values['data-dir'] ?? (env.DATA_DIR || './data'),
    topic: values.topic ?? null,
    database: values.database ?? (env.CLICKHOUSE_DATABASE || null),
    quiet: values.quiet ?? false,
  };
}
