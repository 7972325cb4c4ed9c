/**
 * `sql <question> [--mode live|test] [--param k=v] [--format table|csv|json]`: runs one of the
 * analysts' guide questions against CLICKHOUSE_URL (database CLICKHOUSE_DATABASE, else the URL's
 * path, else `tracking`) and prints the answer, for an analyst without a SQL client.
 */
import { parseArgs } from 'node:util';
import { clickHouseErrorInfo, createClickHouseClient, DEFAULT_CLICKHOUSE_URL, resolveTarget } from '../../../lib/clickhouse/client.ts';
import { bindQueryParams, QueryParamError, queryParams } from '../../../lib/clickhouse/params.ts';
import type { RunCommand } from './command.ts';
import { alignedTable, shownValue } from './format.ts';
import type { CliIo } from './io.ts';
import { findQuestion, guideQuestions, type GuideQuestion } from './guide.ts';

export const SQL_USAGE = `Usage: npm run cli -- sql <question> [--mode live|test] [--param name=value ...] [--format table|csv|json]
       npm run cli -- sql --list

Runs a question of the analysts' guide (docs/analysts.md) against ClickHouse and prints the answer.
  <question>          its number: 1, q1 ... (--list shows them)
  --mode live|test    the shipments of live keys (default) or of trk_test_ keys (the sandbox)
  --param name=value  a value for any other {name:Type} of the question; as_of (the moment a
                      window counts back from, UTC) defaults to now: --param as_of=2026-11-27T00:00:00Z
  --format <f>        table (default), csv (with a header line) or json (an array of rows)
ClickHouse: CLICKHOUSE_URL (default ${DEFAULT_CLICKHOUSE_URL}), database CLICKHOUSE_DATABASE or the URL's path (default tracking).
`;

type Row = Record<string, unknown>;

/**
 * The figures live in ClickHouse, which the embedded default does not run: what to start, and how
 * the history gets there, for an analyst whose first `cli sql` found nothing listening.
 */
export const NO_CLICKHOUSE_HINT = `
The questions read ClickHouse, which the embedded default (npm start without services) does not run.
  1. Start the services:            npm run services -- up      (or point CLICKHOUSE_URL at your own ClickHouse)
     and use their addresses:       eval "$(npm run -s services -- env | sed 's/^/export /')"
  2. Create the tables:             npm run migrate
  3. Load a history, either
     - the embedded store's:        npm run cli -- store move   (stop npm start first; a normalizer loads it into ClickHouse)
     - or a simulated one:          npm run cli -- sandbox history --shipments 8000 --into-stores
     with a normalizer running:     npm run normalizer
  4. Ask again, e.g.:               npm run cli -- sql 1 --mode test
Docs: docs/analysts.md ("Connecting").
`;

/** The database or a table is missing: migrations not run there. */
const NO_TABLES_HINT = `
The database or its tables are missing: run npm run migrate against this ClickHouse (CLICKHOUSE_URL, CLICKHOUSE_DATABASE), then load a
history (npm run cli -- store move, or npm run cli -- sandbox history --shipments 8000 --into-stores, with a normalizer running).
`;

/** A question's title as the guide writes it: "3. Cancellations by carrier". */
export function questionTitle(question: GuideQuestion): string {
  return `${question.id.slice(1)}. ${question.title}`;
}

/** Aligned columns; numbers right-aligned, to 4 decimals as the guide shows them. */
export function formatTable(columns: readonly string[], rows: readonly Row[]): string {
  const cells = rows.map((r) => columns.map((c) => shownValue(r[c])));
  const numeric = columns.map((_, i) => cells.length > 0 && cells.every((r) => /^-?\d+(\.\d+)?(e-?\d+)?$|^NULL$/.test(r[i]!)));
  return alignedTable(columns, cells, (column) => !numeric[column]).join('\n') + '\n';
}

function csvField(v: unknown): string {
  const text = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function formatCsv(columns: readonly string[], rows: readonly Row[]): string {
  return [columns.map(csvField).join(','), ...rows.map((r) => columns.map((c) => csvField(r[c])).join(','))].join('\n') + '\n';
}

/** `{as_of:DateTime}` when not given: the current second, UTC (as `now()` would be). */
export function defaultAsOf(nowMs: number = Date.now()): string {
  return new Date(Math.floor(nowMs / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/** The statement `sql` would send: the question with --mode and --param bound (as_of defaults to now). */
export function boundQuestion(question: GuideQuestion, mode: string, params: Readonly<Record<string, string>>, nowMs?: number): string {
  return bindQueryParams(question.sql, { as_of: defaultAsOf(nowMs), ...params, mode });
}

function parseParams(values: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf('=');
    if (at <= 0) throw new QueryParamError(`--param takes name=value, got ${JSON.stringify(v)}`);
    params[v.slice(0, at)] = v.slice(at + 1);
  }
  return params;
}

/** Runs `sql …`; exit 0 answered, 1 ClickHouse failed, 2 usage error. */
export async function runSql(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: {
        mode: { type: 'string', default: 'live' }, param: { type: 'string', multiple: true, default: [] }, format: { type: 'string', default: 'table' },
        list: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n\n${SQL_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) { io.stdout(SQL_USAGE); return 0; }
  const questions = guideQuestions();
  if (values.list) {
    io.stdout(questions.map((q) => `${questionTitle(q)}`).join('\n') + '\n');
    return 0;
  }
  const usage = (message: string) => { io.stderr(`error: ${message}\n\n${SQL_USAGE}`); return 2; };
  if (positionals.length !== 1) return usage('sql takes one question (its number; --list shows them).');
  const question = findQuestion(questions, positionals[0]!);
  if (!question) return usage(`no question ${JSON.stringify(positionals[0])} in docs/analysts.md (there are ${questions.map((q) => q.id).join(', ')}).`);
  if (values.mode !== 'live' && values.mode !== 'test') return usage(`--mode is live or test, got ${JSON.stringify(values.mode)}.`);
  if (!['table', 'csv', 'json'].includes(values.format)) return usage(`--format is table, csv or json, got ${JSON.stringify(values.format)}.`);
  let statement: string;
  let params: Record<string, string>;
  try {
    params = { as_of: defaultAsOf(), ...parseParams(values.param) };
    statement = boundQuestion(question, values.mode, params);
  } catch (err) {
    if (err instanceof QueryParamError) return usage(err.message);
    throw err;
  }

  const target = resolveTarget(io.env.CLICKHOUSE_URL ?? DEFAULT_CLICKHOUSE_URL, io.env.CLICKHOUSE_DATABASE);
  const client = createClickHouseClient(target);
  try {
    // JSON (not JSONEachRow): its `meta` keeps the columns' order for the table and the CSV header.
    const answer = await (await client.query({ query: statement, format: 'JSON' })).json<Row>();
    const columns = answer.meta?.map((m) => m.name) ?? [];
    const rows = answer.data;
    if (values.format === 'json') io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
    else if (values.format === 'csv') io.stdout(formatCsv(columns, rows));
    else {
      const asOf = queryParams(question.sql).has('as_of') ? `; as of ${params.as_of!.replace('T', ' ').replace(/(Z|\+00:00)$/, '')} UTC` : '';
      io.stdout(`${questionTitle(question)} (mode ${values.mode}${asOf}; ${target.url}, database ${target.database})\n\n${formatTable(columns, rows)}`);
      if (rows.length === 0) {
        io.stdout(values.mode === 'live'
          ? '(no rows: no live shipments closed in the question\'s window; with only trk_test_ keys, add --mode test)\n'
          : '(no rows: no sandbox shipments closed in the question\'s window; `npm run cli -- sandbox history --shipments 8000 --into-stores` fills 90 ' +
            'days of them, with a normalizer running; windows end at --param as_of, default now)\n');
      }
    }
    return 0;
  } catch (err) {
    const { code, message } = clickHouseErrorInfo(err);
    const reply = code === null ? 'could not be reached' : `answered error ${code}`;
    io.stderr(`error: ClickHouse at ${target.url} (database ${target.database}) ${reply}: ${message}\n`);
    if (code === null) io.stderr(NO_CLICKHOUSE_HINT);
    else if (code === 60 || code === 81) io.stderr(NO_TABLES_HINT);
    return 1;
  } finally {
    await client.close();
  }
}

export const sqlCommand: RunCommand = { words: ['sql'], run: runSql };
