/**
 * The shipment analyzer (npm run bench -- analyzer):
 *
 * 1. End to end on the embedded default with a cold cache: `npm start`'s wiring and heap policy (a
 *    child process with apps/api/context/heap-policy.ts's flags; embedded store in a temp DATA_DIR, the
 *    sandbox carriers in process, real clock), one growth-plan key, one POST
 *    /v1/analyses of BENCH_ANALYZER_SHIPMENTS (default 20,000) sandbox shipments over five carriers
 *    and all ten lanes, followed until completed: seconds from the POST to completion, and the peak
 *    extra memory of the process (RSS above what it was just before the POST, sampled every 20 ms).
 * 2. The report function alone (lib/analyzer/report.ts) over BENCH_ANALYZER_REPORT_ROWS (default
 *    200,000) analysed shipments built in memory: shipments per second, best of five runs.
 * 3. Hostile CSV headers against /healthz's p99 (upload-headers.ts).
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HEAP_POLICY_FLAGS, withMallocPolicy } from '../apps/api/context/heap-policy.ts';
import { buildApp } from '../apps/api/app.ts';
import { createApiRuntime } from '../apps/api/context/runtime.ts';
import { buildReport, type AnalyzedShipment, type NetworkLaneFigures } from '../lib/analyzer/index.ts';
import { loadEnv } from '../lib/config/index.ts';
import { startSandbox } from '../lib/sandbox/server.ts';
import { NDR_REASONS, STAGES } from '../lib/schemas/index.ts';
import type { BenchResult } from './report.ts';
import { benchUploadHeaders } from './upload-headers.ts';

export const TARGET_END_TO_END_S = 60;
export const TARGET_REPORT_PER_S = 200_000;
export const TARGET_PEAK_EXTRA_MIB = 150;

const SHIPMENTS = Number(process.env.BENCH_ANALYZER_SHIPMENTS ?? 20_000);
const REPORT_ROWS = Number(process.env.BENCH_ANALYZER_REPORT_ROWS ?? 200_000);
const MIB = 1024 * 1024;

/** Sandbox numbers: a serial, the lane (LL) and a scenario mix like a real month's (SS). */
const SCENARIOS = [4, 4, 4, 4, 4, 4, 10, 2, 3, 5, 6, 7, 12, 13, 11, 1, 14, 20, 23, 0];
function shipmentsOf(count: number): { awb: string; carrier: string; payment_mode: string }[] {
  return Array.from({ length: count }, (_, i) => {
    const serial = String(i).padStart(6, '0');
    const tail = `${String(i % 10).padStart(2, '0')}${String(SCENARIOS[i % SCENARIOS.length]).padStart(2, '0')}`;
    const pick = i % 5;
    const awb = pick === 0 ? `1${serial}00${tail}` // delhivery, 13 digits
      : pick === 1 ? `7${serial}${tail}` // bluedart, 11 digits
      : pick === 2 ? `V${serial}${tail}` // dtdc
      : pick === 3 ? `2${serial}000${tail}` // xpressbees, 14 digits
      : `FMPC${serial}0${tail}`; // ekart
    return { awb, carrier: ['delhivery', 'bluedart', 'dtdc', 'xpressbees', 'ekart'][pick]!, payment_mode: i % 3 ? 'prepaid' : 'cod' };
  });
}

async function endToEnd(): Promise<BenchResult[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-analyzer-'));
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  const runtime = await createApiRuntime(loadEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_TOKEN: 'bench-admin-token' }), { sandboxUrl: sandbox.url, liveTarget: 'sandbox' });
  const app = await buildApp(runtime.deps);
  try {
    const created = await app.inject({ method: 'POST', url: '/admin/keys', headers: { authorization: 'Bearer bench-admin-token' }, payload: { plan: 'growth', mode: 'test', email: 'bench@example.com', analyzer_shipments_limit: Math.max(SHIPMENTS, 1) } });
    const key = (created.json() as { key: string }).key;
    const body = JSON.stringify({ name: 'bench', shipments: shipmentsOf(SHIPMENTS) });
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 20);
    const started = performance.now();
    const posted = await app.inject({ method: 'POST', url: '/v1/analyses', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: body });
    if (posted.statusCode !== 202) throw new Error(`POST /v1/analyses: ${posted.statusCode} ${posted.body}`);
    const { id } = posted.json() as { id: string };
    let status = 'queued';
    while (status !== 'completed' && status !== 'failed') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = ((await app.inject({ method: 'GET', url: `/v1/analyses/${id}`, headers: { 'x-api-key': key } })).json() as { status: string }).status;
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if (status !== 'completed') throw new Error(`analysis ${id} ${status}`);
    const extraMiB = Math.round(((peak - baseline) / MIB) * 10) / 10;
    return [
      { name: `${SHIPMENTS.toLocaleString('en-US')} sandbox shipments end to end, cold cache (embedded)`, value: Math.round(seconds * 10) / 10, unit: 's', target: `<= ${TARGET_END_TO_END_S}`, pass: seconds <= TARGET_END_TO_END_S },
      { name: 'peak extra memory (RSS) during that run', value: extraMiB, unit: 'MiB', target: `<= ${TARGET_PEAK_EXTRA_MIB}`, pass: extraMiB <= TARGET_PEAK_EXTRA_MIB },
    ];
  } finally {
    await app.close();
    await runtime.close();
    await sandbox.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Analysed shipments as a run would leave them: a spread of carriers, lanes, stages and reasons. */
export function analysedRows(count: number): AnalyzedShipment[] {
  const carriers = ['delhivery', 'bluedart', 'dtdc', 'xpressbees', 'ekart'];
  const states = ['Karnataka', 'West Bengal', 'Telangana', 'Maharashtra', 'Uttar Pradesh', 'Delhi', 'Assam', 'Tamil Nadu'];
  const now = Date.now();
  return Array.from({ length: count }, (_, i): AnalyzedShipment => {
    const stage = STAGES[i % STAGES.length]!;
    const carrier = carriers[i % carriers.length]!;
    const o = 100 + (i % 37) * 13;
    const d = 500 + (i % 23) * 11;
    const failed = stage === 'delivery_attempted' || stage.startsWith('rto') ? 1 + (i % 3) : i % 11 === 0 && stage === 'delivered' ? 1 : 0;
    return {
      awb: `B${i}`, carrier, order_id: null, payment_mode: i % 3 ? 'prepaid' : 'cod', promised_by_ms: i % 2 ? now : null,
      result: i % 97 === 0 ? 'not_found' : 'found', status: 'in_transit', stage, attempts: failed + (stage === 'delivered' ? 1 : 0),
      ndr: Array.from({ length: failed }, (_, k) => NDR_REASONS[(i + k) % NDR_REASONS.length]!),
      transit_days: stage === 'delivered' ? 1.5 + (i % 550) / 100 : null,
      origin_pincode: `${o}001`, destination_pincode: `${d}001`, destination_state: states[i % states.length]!, lane: `${carrier}:${o}:${d}`,
      edd_ms: i % 4 ? now - (i % 5) * 3_600_000 : null, delivered_ms: stage === 'delivered' ? now - (i % 7) * 3_600_000 : null,
      is_stuck: i % 41 === 0, hours_since_last_scan: stage === 'delivered' ? null : i % 90, error: null,
    };
  });
}

function reportAlone(): BenchResult[] {
  const rows = analysedRows(REPORT_ROWS);
  const network = new Map<string, NetworkLaneFigures>();
  for (const s of rows.slice(0, 5_000)) {
    const [carrier = '', o = '', d = ''] = s.lane!.split(':');
    network.set(s.lane!, { carrier, origin_prefix: o, destination_prefix: d, sample_size: 40, p50_transit_days: 3, on_time_rate: 0.8, rto_rate: 0.1, first_attempt_rate: 0.7 });
  }
  // One run first so the JIT has compiled the pass before any is timed.
  buildReport({ shipments: rows, network, windowDays: 90, asOfMs: Date.now() });
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    buildReport({ shipments: rows, network, windowDays: 90, asOfMs: Date.now() });
    best = Math.min(best, performance.now() - started);
  }
  const perSecond = Math.round(REPORT_ROWS / (best / 1000));
  return [{ name: `report of ${REPORT_ROWS.toLocaleString('en-US')} analysed shipments (best of 5)`, value: perSecond, unit: 'shipments/s', target: `>= ${TARGET_REPORT_PER_S}`, pass: perSecond >= TARGET_REPORT_PER_S }];
}

const CHILD_FLAG = 'BENCH_ANALYZER_CHILD';

/** The end-to-end run in a process of its own, started as `npm start` starts the embedded default. */
function endToEndInChild(): Promise<BenchResult[]> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], {
      env: withMallocPolicy({ ...process.env, [CHILD_FLAG]: '1' }),
      execArgv: [...HEAP_POLICY_FLAGS],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (results) => resolve(results as BenchResult[]));
    child.once('exit', (code) => { if (code !== 0) reject(new Error(`analyzer bench child exited ${code}`)); });
  });
}

if (process.env[CHILD_FLAG] === '1') {
  const results = await endToEnd();
  process.send!(results, () => process.exit(0));
}

export async function benchAnalyzer(): Promise<BenchResult[]> {
  return [...reportAlone(), ...await endToEndInChild(), ...await benchUploadHeaders()];
}
