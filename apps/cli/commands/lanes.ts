/**
 * `lanes <origin_pincode> <destination_pincode>`: GET /v1/lanes/... with an API key (one lookup),
 * printed as a table for a person. The key comes from --key or TRACKING_API_KEY.
 */
import { parseArgs } from 'node:util';
import type { LaneComparison } from '../../../lib/lanes/index.ts';
import type { RunCommand } from './command.ts';
import { alignedTable, formatDays as days, formatPercent as pct } from './format.ts';
import type { CliIo } from './io.ts';

export const LANES_USAGE = `Usage: npm run cli -- lanes <origin_pincode> <destination_pincode> [--key trk_…] [--url <base>] [--json]

Compares carriers on a lane (GET /v1/lanes/…; consumes one lookup of the key).
  --key <key>   API key (default: the TRACKING_API_KEY environment variable)
  --url <base>  API base URL (default http://127.0.0.1:\${PORT:-3000})
  --json        print the API's JSON instead of the table
`;

/** When the API read the figures it answered from (its `lanes-read-at` / `lanes-next-read-at` headers). */
export interface LaneFigureTimes {
  readAtMs: number;
  nextReadAtMs: number;
  nowMs: number;
}

const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 19)} UTC`;

/**
 * Why the figures may lag: the normalizer recomputes lane figures once a minute, and the API
 * answers from its copy of them, read at most LANE_CACHE_TTL_MS before (60 s by default).
 */
export function freshnessLine(times: LaneFigureTimes | null): string {
  if (!times) return 'Figures computed at this request.';
  const age = Math.max(0, Math.round((times.nowMs - times.readAtMs) / 1000));
  const next = times.nextReadAtMs <= times.nowMs
    ? 'at the next request'
    : `at ${clock(times.nextReadAtMs)} (in ${Math.round((times.nextReadAtMs - times.nowMs) / 1000)} s)`;
  return `Figures as cached by the API at ${clock(times.readAtMs)} (${age} s ago); it reads them again ${next}. `
    + 'The normalizer recomputes them once a minute, so a shipment closed in the last 2 minutes may not count yet.';
}

/** The comparison as aligned text columns, one carrier a row, the top NDR reason last. */
export function formatLaneTable(answer: LaneComparison, times: LaneFigureTimes | null = null): string {
  const header = ['carrier', 'samples', 'p50 days', 'p90 days', 'on time', '1st attempt', 'RTO', 'top NDR reason'];
  const rows = answer.carriers.map((c) => {
    const top = c.ndr_reasons ? Object.entries(c.ndr_reasons).sort((a, b) => b[1] - a[1])[0] : undefined;
    const marks = [c.carrier === answer.fastest ? 'fastest' : '', c.carrier === answer.most_reliable ? 'most reliable' : ''].filter(Boolean).join(', ');
    return [
      c.carrier + (marks ? ` (${marks})` : ''), String(c.sample_size), days(c.p50_transit_days), days(c.p90_transit_days), pct(c.on_time_rate),
      pct(c.first_attempt_rate), pct(c.rto_rate), top ? `${top[0]} ${pct(top[1])}` : '—',
    ];
  });
  // The carrier and the NDR reason are text; the figures between them right-aligned.
  const [headerLine, rule, ...lines] = alignedTable(header, rows, (column) => column === 0 || column === header.length - 1);
  const title = `Lane ${answer.origin_prefix}xxx → ${answer.destination_prefix}xxx, shipments closed in the last ${answer.window_days} days`;
  const body = lines.length ? lines : ['(no closed shipments on this lane in the window)'];
  return [title, '', headerLine, rule, ...body, '', 'Figures need 30 deliveries in the window (— otherwise).', freshnessLine(times), ''].join('\n');
}

/** Runs `lanes …`; returns the exit code (0 ok, 1 the API refused or is unreachable, 2 usage error). */
export async function runLanes(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { key: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n\n${LANES_USAGE}`);
    return 2;
  }
  if (parsed.values.help) { io.stdout(LANES_USAGE); return 0; }
  const [origin, destination, ...rest] = parsed.positionals;
  const key = parsed.values.key ?? io.env.TRACKING_API_KEY;
  const problem = !origin || !destination || rest.length
    ? 'lanes takes an origin and a destination pincode.'
    : !key ? 'No API key: pass --key or set TRACKING_API_KEY.' : null;
  if (problem) { io.stderr(`error: ${problem}\n\n${LANES_USAGE}`); return 2; }
  const base = parsed.values.url ?? `http://127.0.0.1:${io.env.PORT || 3000}`;
  let res: Response;
  try {
    res = await fetch(new URL(`/v1/lanes/${encodeURIComponent(origin!)}/${encodeURIComponent(destination!)}`, base), { headers: { 'x-api-key': key! } });
  } catch (err) {
    io.stderr(`error: ${base} could not be reached: ${(err as Error).message}\n`);
    return 1;
  }
  const body = await res.json().catch(() => null) as (LaneComparison & { error?: { code: string; message: string } }) | null;
  if (!res.ok || !body) {
    io.stderr(`error: ${body?.error?.message ?? `HTTP ${res.status}`} (${body?.error?.code ?? 'unreadable answer'}, HTTP ${res.status})\n`);
    return 1;
  }
  const readAt = Date.parse(res.headers.get('lanes-read-at') ?? '');
  const nextReadAt = Date.parse(res.headers.get('lanes-next-read-at') ?? '');
  const times = Number.isFinite(readAt) && Number.isFinite(nextReadAt) ? { readAtMs: readAt, nextReadAtMs: nextReadAt, nowMs: Date.now() } : null;
  io.stdout(parsed.values.json ? `${JSON.stringify(body, null, 2)}\n` : formatLaneTable(body, times));
  return 0;
}

export const lanesCommand: RunCommand = { words: ['lanes'], run: runLanes };
