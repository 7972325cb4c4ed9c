/**
 * `analyze <shipments.csv|shipments.json>`: submits a shipment analysis to the API (POST
 * /v1/analyses with an API key), shows its progress (cli-progress, on stderr when it is a terminal),
 * then prints a summary table and writes the full report as JSON. The key comes from --key or
 * TRACKING_API_KEY.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { Group, Report } from '../../../lib/analyzer/index.ts';
import type { RunCommand } from './command.ts';
import { alignedTable, formatDays as days, formatPercent as pct } from './format.ts';
import type { CliIo } from './io.ts';

export const ANALYZE_USAGE =
  `Usage: npm run cli -- analyze <shipments.csv|shipments.json> [--key trk_…] [--url <base>] [--name <name>] [--out <report.json>] [--json]

Analyses your shipments against the network (POST /v1/analyses; growth and business plans; counts
against the analyzer allowance, consumes no lookups). CSV: a header row naming awb (required),
carrier, order_id, payment_mode (cod|prepaid), order_value_inr, promised_by. JSON: the API's body.
  --key <key>    API key (default: the TRACKING_API_KEY environment variable)
  --url <base>   API base URL (default http://127.0.0.1:\${PORT:-3000})
  --name <name>  the analysis' name (default: the file's name)
  --out <file>   where the report is written (default: <file>.report.json)
  --json         print the final analysis JSON instead of the table
`;

/** The group's name (first column) as text, its figures right-aligned. */
const table = (header: string[], rows: string[][]) => alignedTable(header, rows, (column) => column === 0);

const GROUP_HEADER = ['shipments', 'delivered', 'RTO', 'NDR', '1st attempt', 'p50 days', 'on time (EDD)', 'on time (promise)', 'stuck'];
const groupCells = (g: Group) => [
  String(g.shipments), pct(g.delivered_rate), pct(g.rto_rate), pct(g.ndr_rate), pct(g.first_attempt_rate), days(g.p50_transit_days),
  pct(g.on_time_rate_vs_carrier_edd), pct(g.on_time_rate_vs_promise), String(g.stuck),
];

/** The report as text for a person: totals, couriers, payment modes, recommendations, attention. */
export function formatReport(name: string | null, report: Report): string {
  const t = report.totals;
  const out = [
    `Analysis${name ? ` "${name}"` : ''} as of ${report.as_of}`,
    `${t.shipments} shipments: ${t.found} found (${t.by_outcome.delivered} delivered, ${t.by_outcome.rto} RTO, ${t.by_outcome.in_transit} in transit, ${t.by_outcome.pending} awaiting pickup, ${t.by_outcome.cancelled} cancelled, ${t.by_outcome.exception} exceptions), ${t.not_found} not found, ${t.errors} carrier errors`,
    '',
    ...table(['courier', ...GROUP_HEADER], report.by_carrier.map((g) => [g.carrier, ...groupCells(g)])),
    '',
    ...table(['payment', ...GROUP_HEADER], report.by_payment_mode.map((g) => [g.payment_mode, ...groupCells(g)])),
    '',
  ];
  if (report.recommendations.length) {
    out.push(
      'Recommendations:',
      ...report.recommendations.map((r) => `  ${r.lane}: ${r.suggested_carrier} instead of ${r.current_carrier}. ${r.reason}`),
      '',
    );
  } else {
    out.push('Recommendations: none (no lane where another courier is clearly better on 30+ network deliveries).', '');
  }
  const attentionByReason = report.attention.length
    ? ` (${['stuck', 'failed_attempt', 'exception'].map((r) => `${report.attention.filter((a) => a.reason === r).length} ${r.replace('_', ' ')}`).join(', ')})`
    : '';
  out.push(`Needs attention: ${report.attention.length}${attentionByReason}`, '');
  return out.join('\n');
}

interface AnalysisView {
  id: string;
  name: string | null;
  status: string;
  progress: { done: number; total: number };
  report: Report | null;
  rejected_rows: { row: number; awb: string | null; code: string }[];
}

/** Runs `analyze …`; returns the exit code (0 ok, 1 the API refused or failed, 2 usage error). */
export async function runAnalyze(argv: string[], io: CliIo & { pollMs?: number; progressStream?: NodeJS.WriteStream }): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        key: { type: 'string' }, url: { type: 'string' }, name: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n\n${ANALYZE_USAGE}`);
    return 2;
  }
  if (parsed.values.help) { io.stdout(ANALYZE_USAGE); return 0; }
  const [file, ...rest] = parsed.positionals;
  const key = parsed.values.key ?? io.env.TRACKING_API_KEY;
  const problem = !file || rest.length ? 'analyze takes one file.' : !key ? 'No API key: pass --key or set TRACKING_API_KEY.' : null;
  if (problem) { io.stderr(`error: ${problem}\n\n${ANALYZE_USAGE}`); return 2; }
  let content: Buffer;
  try {
    content = await readFile(file!);
  } catch (err) {
    io.stderr(`error: ${file} could not be read: ${(err as Error).message}\n`);
    return 2;
  }
  const base = parsed.values.url ?? `http://127.0.0.1:${io.env.PORT || 3000}`;
  const name = parsed.values.name ?? basename(file!);
  const isJson = extname(file!).toLowerCase() === '.json';
  const headers = { 'x-api-key': key!, 'content-type': isJson ? 'application/json' : 'text/csv' };
  const call = async <T>(method: string, path: string, body?: string): Promise<T> => {
    const res = await fetch(new URL(path, base), { method, headers, ...(body === undefined ? {} : { body }) });
    const answer = await res.json().catch(() => null) as (T & { error?: { code: string; message: string } }) | null;
    if (!res.ok || !answer) {
      throw new Error(`${answer?.error?.message ?? `HTTP ${res.status}`} (${answer?.error?.code ?? 'unreadable answer'}, HTTP ${res.status})`);
    }
    return answer;
  };

  let bar: cliProgress.SingleBar | null = null;
  try {
    let body = content.toString('utf8');
    if (isJson && parsed.values.name) body = JSON.stringify({ ...(JSON.parse(content.toString('utf8')) as object), name });
    const path = isJson ? '/v1/analyses' : `/v1/analyses?name=${encodeURIComponent(name)}`;
    const created = await call<{ id: string; shipments: number; rejected_rows: AnalysisView['rejected_rows'] }>('POST', path, body);
    const rejected = created.rejected_rows.length
      ? `, ${created.rejected_rows.length} rows rejected (first: row ${created.rejected_rows[0]!.row} ${created.rejected_rows[0]!.code})`
      : '';
    io.stderr(`analysis ${created.id}: ${created.shipments} shipments accepted${rejected}\n`);
    const stream = io.progressStream ?? process.stderr;
    if (stream.isTTY) {
      bar = new cliProgress.SingleBar(
        { format: 'analysing |{bar}| {percentage}% | {value}/{total} shipments | ETA {eta_formatted}', stream, hideCursor: false, fps: 5 },
        cliProgress.Presets.shades_classic,
      );
      bar.start(created.shipments, 0);
    }
    let view: AnalysisView;
    for (;;) {
      view = await call<AnalysisView>('GET', `/v1/analyses/${created.id}`);
      bar?.update(view.progress.done);
      if (view.status === 'completed' || view.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, io.pollMs ?? 500));
    }
    bar?.stop();
    bar = null;
    if (view.status !== 'completed' || !view.report) throw new Error(`the analysis ${view.status}`);
    const out = parsed.values.out ?? `${file}.report.json`;
    await writeFile(out, `${JSON.stringify(view, null, 2)}\n`);
    io.stdout(parsed.values.json ? `${JSON.stringify(view, null, 2)}\n` : `${formatReport(view.name, view.report)}Report written to ${out}\n`);
    return 0;
  } catch (err) {
    bar?.stop();
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

export const analyzeCommand: RunCommand = { words: ['analyze'], run: runAnalyze };
