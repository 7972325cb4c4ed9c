/**
 * After a broker outage (npm run bench -- outage): the API in distributed mode (Redis, Kafka) starts
 * on a DATA_DIR whose spool holds BENCH_OUTAGE_POLLS (default 100,000) polls left by an outage, and
 * drains them to Kafka while it answers cached lookups at a normal load (10 connections). Measured
 * side by side in one run, two server processes of the same Node: the same load on a server with an
 * empty spool (the baseline) and on the one draining. Prints both p99s, their ratio, the drain's
 * rate (polls/s, from the spool size on /metrics), and the load average.
 *
 * Needs the services (npm run services -- up); the polls go to the real raw-poll topic under
 * AWBs of this run's own (the normalizers of other runs are not running here).
 */
import { mkdtempSync, mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Spool } from '../lib/kafka/spool.ts';
import { pollKey } from '../lib/kafka/topics.ts';
import { journeyPoll } from '../lib/testutil/polls.ts';
import { urlOf } from '../test/services/ports.ts';
import { createBenchKey, load, progressLog, redisUrl, serverEnv, startServer, tracked, type Server } from './harness.ts';
import type { BenchResult } from './report.ts';
import { percentile, round } from './stats.ts';

const POLLS = Number(process.env.BENCH_OUTAGE_POLLS ?? 100_000);
const CONNECTIONS = 10;
const SLICE_S = 2;
const progress = progressLog('outage');

/** A DATA_DIR whose spool slot 0 holds `count` polls, as an outage leaves it. */
function spooledDataDir(count: number): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-outage-'));
  const slot = join(dataDir, 'spool', 'carrier-polls', '0');
  mkdirSync(slot, { recursive: true });
  const spool = new Spool(slot);
  const run = Date.now() % 1_000_000;
  const t = Date.now();
  for (let i = 0; i < count; i++) {
    const poll = { ...journeyPoll('delhivery', i), awb: `${run}${String(i).padStart(7, '0')}02` };
    spool.append(JSON.stringify({ t, key: pollKey(poll.carrier, poll.awb), value: JSON.stringify(poll), mode: 'test' }));
  }
  spool.close();
  return dataDir;
}

async function spoolBytes(server: Server): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('poll_spool_bytes '));
  return line ? Number(line.split(' ')[1]) : Number.NaN;
}

async function lookupUrl(server: Server): Promise<{ url: string; headers: Record<string, string> }> {
  const key = await createBenchKey(server);
  const url = `${server.url}/v1/track/delhivery/1234567890104`;
  const headers = { 'x-api-key': key };
  // Delivered: cached for good after this first lookup, so the load is the API's own path.
  await fetch(url, { headers });
  return { url, headers };
}

export async function benchOutage(): Promise<BenchResult[]> {
  const servers: Server[] = [];
  const env = (dataDir: string) => serverEnv({ REDIS_URL: redisUrl(), KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? urlOf('kafka'), DATA_DIR: dataDir });
  try {
    progress(`spooling ${POLLS} polls into a DATA_DIR`);
    const spooled = spooledDataDir(POLLS);
    const quiet = await tracked(servers, startServer('empty-spool', 'api.ts', env(mkdtempSync(join(tmpdir(), 'bench-outage-'))), null));
    const quietTarget = await lookupUrl(quiet);
    progress('baseline: cached lookups, empty spool');
    const baseline = await load(quietTarget.url, { connections: CONNECTIONS, duration: 10, headers: quietTarget.headers }, 'baseline');
    await quiet.stop();

    progress('draining: the same load while the spool goes to Kafka');
    const startedMs = performance.now();
    const draining = await tracked(servers, startServer('draining', 'api.ts', env(spooled), null));
    const target = await lookupUrl(draining);
    const latencies: number[] = [];
    let drainedMs: number | null = null;
    const watching = (async () => {
      while (drainedMs === null && performance.now() - startedMs < 600_000) {
        if ((await spoolBytes(draining)) === 0) drainedMs = performance.now() - startedMs;
        else await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    // Slices of load until the spool is empty: every latency counted was measured during the drain.
    while (drainedMs === null && performance.now() - startedMs < 600_000) {
      latencies.push(...(await load(target.url, { connections: CONNECTIONS, duration: SLICE_S, headers: target.headers }, 'during the drain')).latencies);
    }
    await watching;
    const load1 = loadavg()[0]!;
    const base99 = percentile([...baseline.latencies].sort((a, b) => a - b), 99);
    const drain99 = percentile(latencies.sort((a, b) => a - b), 99);
    const seconds = (drainedMs ?? Number.NaN) / 1000;
    return [
      { name: 'lookup p99, empty spool (10 connections, cached)', value: round(base99, 2), unit: 'ms', target: null, pass: null },
      { name: `lookup p99 while ${POLLS} spooled polls drain`, value: round(drain99, 2), unit: 'ms', target: null, pass: null },
      { name: '  ratio draining ÷ empty', value: round(drain99 / base99, 2), unit: '×', target: null, pass: null },
      { name: '  lookups answered during the drain', value: latencies.length, unit: 'requests', target: null, pass: null },
      { name: 'drain: spool to Kafka (start of the process to an empty spool)', value: round(seconds, 1), unit: 's', target: null, pass: null },
      { name: '  rate', value: round(POLLS / seconds), unit: 'polls/s', target: null, pass: null },
      { name: '  (load average after)', value: round(load1, 2), unit: 'runnable', target: null, pass: null },
    ];
  } finally {
    for (const server of servers) await server.stop().catch(() => null);
  }
}
