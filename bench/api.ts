/**
 * API throughput and memory (npm run bench -- api [--profile]).
 *
 * Three servers, each in a child process of its own (so autocannon, here in the parent, never shares
 * a server's event loop), measured side by side in one run with the same load (50 connections, a
 * warm-up, then 10 s measured in slices taken in turn):
 *   - bare Fastify answering the very tracking record the API answered (the reference);
 *   - the real API in Redis mode (REDIS_URL), a key with huge limits, one cached AWB;
 *   - the real API in embedded mode (no REDIS_URL, temp DATA_DIR), the same.
 * One key and one consignment is the best case for batching (the Redis store counts the concurrent
 * lookups of one key together, and the caches read one entry once per turn); so the three servers
 * are measured again in the same way with the load spread over 20 keys and 500
 * consignments, together with a fourth server: the API on the Redis Cluster (spread load only).
 * Then 1,000,000 lookups against a fresh embedded API: cached lookups over a hot set of 1,000 AWBs,
 * and one lookup in five walking a cold set of 60,000 more (61,000 distinct AWBs, more than the
 * in-process cache's CACHE_MAX_BYTES holds: it fills, then evicts), with the server's memory read
 * (after a full GC) at the start, after 250k, 500k, 750k and 1M; memory must stay flat from 500k.
 * Then issue 32's memory figures, each on a fresh embedded API: BENCH_RECORDS (100,000) distinct
 * delivered shipments on one lane, looked up once each (the rate per tenth must stay flat; RSS
 * once all are cached), and the spread load for BENCH_SPREAD_LOAD_SECONDS (600; the heap must come
 * back to its start). The ratios of every side-by-side run are printed together at the end, each
 * with the load average measured beside it.
 *
 * --profile (or BENCH_CPU_PROF=1) runs the servers under `node --cpu-prof` and prints where their
 * CPU time went (top self-time functions and packages; the .cpuprofile files are kept for a flame
 * graph: open them in Chrome DevTools or speedscope); --records-only runs only the one-lane run (BENCH_CACHE_MAX_BYTES sets its cache bound),
 * --spread-heap-only only the heap under the spread load;
 * --skip-memory leaves out the 1,000,000-lookup memory run, --memory-only everything else (for
 * quick iterations on one of them), --batch-only runs only the batch rows (bench/api-batch.ts),
 * --cluster-only only the spread run of bare Fastify and the API on one Redis and on the Redis
 * Cluster of `npm run services` (REDIS_CLUSTER_URL), which the full run measures beside the others.
 */
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { TrackingRecordSchema } from '../lib/schemas/index.ts';
import type { BenchResult } from './report.ts';
import type { MemoryMessage } from './servers/protocol.ts';
import { batchRun } from './api-batch.ts';
import { DEFAULT_CACHE_MAX_BYTES } from '../lib/cache/index.ts';
import { DEFAULT_IDLE_RELEASE } from '../lib/process/release-memory.ts';
import { textFlameGraph, type CpuProfile, type ProfileNode } from './flame.ts';
import {
  createBenchKey, load, LOAD_CONNECTIONS as CONNECTIONS, redisClusterUrl, redisUrl, REPO_ROOT, serverEnv, startServer, tracked, type LoadFigures, type Server,
} from './harness.ts';
import { percentile, round } from './stats.ts';

/** Issue 32's targets: cached lookups ÷ bare route, one key and spread; p99 at the bench's load. */
export const TARGET_REDIS_RATIO = 0.7;
export const TARGET_EMBEDDED_RATIO = 0.85;
export const TARGET_SPREAD_REDIS_RATIO = 0.6;
export const TARGET_SPREAD_EMBEDDED_RATIO = 0.8;
export const TARGET_CLUSTER_RATIO = 0.5;
export const TARGET_P99_MS = 5;
export const TARGET_REDIS_P99_MS = 8;
/** 100,000 cached delivered records: the embedded process's whole RSS. */
const TARGET_RECORDS_RSS_MIB = 250;
/** When the records run reads the idle process again: two of its idle-release intervals and a little. */
const IDLE_READING_MS = 2 * DEFAULT_IDLE_RELEASE.everyMs + 5_000;
/** One lane's distinct delivered shipments: the last 10,000 at least this share of the first's rate. */
const TARGET_LANE_FLATNESS = 0.5;
/** Heap after the spread load, against its start. */
const TARGET_SPREAD_HEAP_GROWTH = 0.1;

/** Sizes of the memory benches (env, for a smoke run: e.g. BENCH_RECORDS=2000 BENCH_SPREAD_LOAD_SECONDS=5). */
const envInt = (name: string, fallback: number) => (process.env[name] ? Number.parseInt(process.env[name]!, 10) : fallback);
const RECORDS = envInt('BENCH_RECORDS', 100_000);
const RECORDS_SLICE = Math.max(1, Math.floor(RECORDS / 10));
const SPREAD_LOAD_SECONDS = envInt('BENCH_SPREAD_LOAD_SECONDS', 600);

const WARMUP_SECONDS = 3;
const MEASURE_SECONDS = 10;
const MEASURE_ROUNDS = 5;
/** The AWB of the curl line `npm start` prints: delhivery, lane 01, scenario 02 (in transit). */
const HOT_AWB = '1234567890102';
const TRACK_PATH = `/v1/track/delhivery/${HOT_AWB}`;

const MEMORY_LOOKUPS = 1_000_000;
const MEMORY_CHECKPOINTS = [MEMORY_LOOKUPS / 4, MEMORY_LOOKUPS / 2, (MEMORY_LOOKUPS * 3) / 4, MEMORY_LOOKUPS];
const HOT_SET = 1_000;
/** One lookup in this many is of an AWB of the cold set, walked in order, round and round. */
const COLD_EVERY = 5;
/**
 * The cold set: with the hot set, more AWBs than the cache holds. The cache is full at about 245k
 * lookups; the cold walk is through at 300k (no new shipment after that) and then goes round
 * again, every cold lookup a miss that polls the carrier and evicts an older entry.
 */
const COLD_SET = 60_000;
/** From 500k on (cache full, every AWB known, evicting), RSS may grow at most this much. */
const TARGET_RSS_GROWTH = 0.1;
/** The same window: the live JS heap may not grow beyond noise. */
const TARGET_HEAP_GROWTH = 0.02;
/** The lookup rate at which latency is also measured without saturating the server. */
const MODERATE_RATE = 1_000;
const MODERATE_SECONDS = 5;
/**
 * The informative spread run: the same load over many keys and consignments, where concurrent
 * lookups seldom share a key or a cache entry (only one script call per turn remains shared).
 */
const SPREAD_KEYS = 20;
const SPREAD_AWBS = 500;
/** Sandbox scenarios that answer 200 at once (sandbox.md): not 00 not-found, 17 down, 18 slow, 19 malformed. */
const FOUND_SCENARIOS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24];

/** The records run's server: the embedded default, its cache bound from BENCH_CACHE_MAX_BYTES when set (else the default). */
function recordsEnv(tmp: string): NodeJS.ProcessEnv {
  const bound = process.env.BENCH_CACHE_MAX_BYTES;
  return serverEnv({ DATA_DIR: join(tmp, 'data-records'), ...(bound ? { CACHE_MAX_BYTES: bound } : {}) });
}

/** GET a tracking record, asserting 200 and the response schema. */
async function track(server: Server, key: string, path = TRACK_PATH): Promise<{ text: string; cached: boolean }> {
  const res = await fetch(`${server.url}${path}`, { headers: { 'x-api-key': key } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${server.name}: GET ${path} → ${res.status} ${text}`);
  const parsed = TrackingRecordSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${server.name}: GET ${path} is no tracking record: ${parsed.error.message}`);
  return { text, cached: parsed.data.cached };
}

interface SideBySide {
  requestsPerSecond: number;
  /** The machine's 1-minute load average, the mean of its readings after each slice. */
  load1: number;
  p50: number;
  p99: number;
  /** The server process's CPU time (user + system) per request answered, in microseconds. */
  cpuMicrosPerRequest: number;
}

/**
 * Each server is warmed up, then measured in MEASURE_ROUNDS slices taken in turn (bare, Redis,
 * embedded, bare, ...), so a change in what else this shared machine runs falls on all three alike.
 */
async function measureSideBySide(targets: { server: Server; lookups: Lookups }[]): Promise<Map<Server, SideBySide>> {
  const run = (t: { server: Server; lookups: Lookups }, seconds: number, what: string) =>
    load(`${t.server.url}${t.lookups.path ?? ''}`, { ...t.lookups.options, duration: seconds }, what);
  for (const t of targets) await run(t, WARMUP_SECONDS, `${t.server.name} warm-up`);
  const slices = new Map<Server, { figures: LoadFigures; cpuMicros: number; load1: number }[]>(targets.map((t) => [t.server, []]));
  for (let r = 0; r < MEASURE_ROUNDS; r++) {
    for (const t of targets) {
      const cpuBefore = await t.server.cpu();
      const figures = await run(t, MEASURE_SECONDS / MEASURE_ROUNDS, t.server.name);
      slices.get(t.server)!.push({ figures, cpuMicros: (await t.server.cpu()) - cpuBefore, load1: loadavg()[0]! });
    }
  }
  return new Map([...slices].map(([server, runs]) => {
    const latencies = runs.flatMap((r) => r.figures.latencies).sort((a, b) => a - b);
    const requestsPerSecond = runs.reduce((sum, r) => sum + r.figures.requestsPerSecond, 0) / runs.length;
    const requests = runs.reduce((sum, r) => sum + r.figures.total, 0);
    const cpuMicrosPerRequest = runs.reduce((sum, r) => sum + r.cpuMicros, 0) / requests;
    const load1 = runs.reduce((sum, r) => sum + r.load1, 0) / runs.length;
    return [server, { requestsPerSecond, load1, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuMicrosPerRequest }];
  }));
}

/**
 * Open-loop load: requests sent at evenly spaced instants (`rate` per second, whatever the answers
 * do) over keep-alive connections; each request's latency in ms, to the end of its body, and how
 * late this process managed to send (a stalled load generator shows there, not as server latency).
 * autocannon's rate limit fires all its connections at once, which would measure its own bursts.
 */
async function openLoop(server: Server, key: string, rate: number, seconds: number): Promise<{ latencies: number[]; maxLateMs: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const url = `${server.url}${TRACK_PATH}`;
  const latencies: number[] = [];
  const failures: string[] = [];
  const one = () => new Promise<void>((resolve) => {
    const sent = performance.now();
    http.get(url, { agent, headers: { 'x-api-key': key } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) latencies.push(performance.now() - sent);
        else failures.push(`HTTP ${res.statusCode}`);
        resolve();
      });
    }).on('error', (err) => { failures.push(err.message); resolve(); });
  });
  const inFlight: Promise<void>[] = [];
  let maxLateMs = 0;
  try {
    const started = performance.now();
    for (let i = 0; i < rate * seconds; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait));
      maxLateMs = Math.max(maxLateMs, performance.now() - due);
      inFlight.push(one());
    }
    await Promise.all(inFlight);
  } finally {
    agent.destroy();
  }
  if (failures.length) throw new Error(`${server.name} at ${rate} req/s: ${failures.length} failed (${failures[0]})`);
  return { latencies, maxLateMs };
}

const mib = (bytes: number) => round(bytes / 2 ** 20, 1);

/**
 * A delhivery number (12-14 digits) of the memory run; the sandbox reads the lane and the scenario
 * from its last four digits. Serials below HOT_SET are the hot set.
 */
function memoryPath(serial: number): string {
  const scenario = FOUND_SCENARIOS[serial % FOUND_SCENARIOS.length]!;
  const awb = `9${String(serial).padStart(8, '0')}${String(serial % 100).padStart(2, '0')}${String(scenario).padStart(2, '0')}`;
  return `/v1/track/delhivery/${awb}`;
}

/** The lookups of the memory run: the hot set, and one cold AWB in COLD_EVERY lookups. */
function lookupPaths(): () => string {
  let i = 0;
  let cold = 0;
  return () => {
    i += 1;
    if (i % COLD_EVERY === 0) return memoryPath(HOT_SET + (cold++ % COLD_SET));
    return memoryPath((i * 7919) % HOT_SET);
  };
}

/** What a load run asks a server: a path (else each request names its own) and autocannon options. */
interface Lookups {
  path?: string;
  options: Partial<autocannon.Options>;
}

/** The lookup of the side-by-side run: one key, one cached consignment. */
function hotLookup(key: string | null): Lookups {
  return { path: TRACK_PATH, options: { headers: key ? { 'x-api-key': key } : {} } };
}

/**
 * Cached lookups spread over SPREAD_KEYS keys and SPREAD_AWBS consignments, in turn, as a fixed
 * list each connection goes round (autocannon then builds each request once; a setupRequest
 * function per request would cost the load generator more than some servers). Creates the keys
 * and caches the consignments first. Bare Fastify gets the same requests (it ignores the key).
 */
async function spreadLookups(server: Server, isApi: boolean): Promise<Lookups> {
  const keys: string[] = [];
  if (isApi) {
    for (let i = 0; i < SPREAD_KEYS; i++) keys.push(await createBenchKey(server, `spread-${i}`));
    for (let serial = 0; serial < SPREAD_AWBS; serial++) await track(server, keys[serial % SPREAD_KEYS]!, memoryPath(serial));
  }
  return {
    options: {
      requests: Array.from({ length: SPREAD_AWBS }, (_, i) => ({
        method: 'GET', path: memoryPath((i * 7919) % SPREAD_AWBS), headers: { 'x-api-key': keys[i % SPREAD_KEYS] ?? '' },
      })),
    },
  };
}

async function memoryRun(server: Server, key: string): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const row = (label: string, m: MemoryMessage) => {
    results.push({ name: `embedded RSS ${label}`, value: mib(m.rss), unit: 'MiB', target: null, pass: null });
    results.push({ name: `embedded JS heap used ${label}`, value: mib(m.heapUsed), unit: 'MiB', target: null, pass: null });
    results.push({ name: `embedded V8 heap committed ${label}`, value: mib(m.heapTotal), unit: 'MiB', target: null, pass: null });
    results.push({ name: `embedded shipments known ${label}`, value: m.shipments ?? 0, unit: 'shipments', target: null, pass: null });
  };
  const nextPath = lookupPaths();
  // The hot set is in the cache before the start figure, so the run adds only what it should.
  for (let hot = 0; hot < HOT_SET; hot++) await track(server, key, memoryPath(hot));
  const atStart = await server.memory();
  row('at start (hot set cached)', atStart);

  const checkpoints = new Map<number, MemoryMessage>();
  let done = 0;
  let seconds = 0;
  for (const checkpoint of MEMORY_CHECKPOINTS) {
    const amount = checkpoint - done;
    const started = process.hrtime.bigint();
    await load(server.url, {
      amount,
      headers: { 'x-api-key': key },
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: nextPath() }) }],
    }, `embedded memory run to ${checkpoint}`);
    seconds += Number(process.hrtime.bigint() - started) / 1e9;
    done = checkpoint;
    const m = await server.memory();
    checkpoints.set(checkpoint, m);
    row(`after ${checkpoint.toLocaleString('en-US')} lookups`, m);
  }
  results.push({ name: 'memory run: distinct AWBs (hot + cold set; more than CACHE_MAX_BYTES holds)', value: HOT_SET + COLD_SET, unit: 'AWBs', target: null, pass: null });
  results.push({ name: 'memory run: cache misses (cold lookups)', value: MEMORY_LOOKUPS / COLD_EVERY, unit: 'lookups', target: null, pass: null });
  results.push({ name: 'memory run: lookups per second', value: round(MEMORY_LOOKUPS / seconds), unit: 'req/s', target: null, pass: null });

  // From 500k on the cache is full and every AWB known (the cold walk is through at 300k): nothing
  // but the cache's churn remains, so memory may not grow.
  const full = checkpoints.get(MEMORY_LOOKUPS / 2)!;
  const last = checkpoints.get(MEMORY_LOOKUPS)!;
  const perAwb = (full.heapUsed - atStart.heapUsed) / Math.max(1, (full.shipments ?? 0) - (atStart.shipments ?? 0));
  results.push({ name: 'JS heap per AWB added (cache entry + shipment index)', value: Math.round(perAwb), unit: 'bytes', target: null, pass: null });
  const heapGrowth = (last.heapUsed - full.heapUsed) / full.heapUsed;
  results.push({ name: 'JS heap used growth 500k → 1M (no new AWB, cache evicting)', value: round(100 * heapGrowth, 1), unit: '%', target: `<= ${100 * TARGET_HEAP_GROWTH}`, pass: heapGrowth <= TARGET_HEAP_GROWTH });
  const growth = (last.rss - full.rss) / full.rss;
  results.push({ name: 'RSS growth 500k → 1M lookups (no new AWB, cache evicting)', value: round(100 * growth, 1), unit: '%', target: `<= ${100 * TARGET_RSS_GROWTH}`, pass: growth <= TARGET_RSS_GROWTH });
  return results;
}

/**
 * Issue 32's memory figures on a fresh embedded server: RECORDS distinct delivered sandbox
 * shipments, all on one lane (delhivery lane 00, scenario 04), each looked up once (a carrier poll,
 * then cached) at 64 connections, in ten slices: the rate of each slice (flat: no lookup may cost
 * more as the lane grows) and the process's RSS once all are cached; then the median latency of
 * the latest ones asked again (in memory) and of the first (read back from their files).
 */
async function recordsRun(server: Server, key: string): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const path = (serial: number) => `/v1/track/delhivery/9${String(serial).padStart(8, '0')}0004`;
  const atStart = await server.memory();
  const rates: number[] = [];
  let serial = 0;
  for (let done = 0; done < RECORDS; done += RECORDS_SLICE) {
    const amount = Math.min(RECORDS_SLICE, RECORDS - done);
    const figures = await load(server.url, {
      amount, connections: Math.min(64, amount),
      headers: { 'x-api-key': key },
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: path(serial++) }) }],
    }, `records run, ${done + amount} of ${RECORDS}`);
    rates.push(figures.requestsPerSecond);
    results.push({ name: `one lane, delivered shipments ${(done + 1).toLocaleString('en-US')}–${(done + amount).toLocaleString('en-US')}: lookups/s`, value: round(figures.requestsPerSecond), unit: 'req/s', target: null, pass: null });
  }
  const flatness = rates[rates.length - 1]! / rates[0]!;
  results.push({ name: `one lane: last ${RECORDS_SLICE.toLocaleString('en-US')} ÷ first ${RECORDS_SLICE.toLocaleString('en-US')} lookup rate`, value: round(flatness, 2), unit: '', target: `>= ${TARGET_LANE_FLATNESS}`, pass: flatness >= TARGET_LANE_FLATNESS });
  const after = await server.memory();
  results.push({ name: 'records run: RSS before', value: mib(atStart.rss), unit: 'MiB', target: null, pass: null });
  results.push({ name: `${RECORDS.toLocaleString('en-US')} cached delivered records: RSS right after the last lookup`, value: mib(after.rss), unit: 'MiB', target: null, pass: null });
  results.push({ name: '  (JS heap used)', value: mib(after.heapUsed), unit: 'MiB', target: null, pass: null });
  results.push({ name: '  (JS heap per record added)', value: Math.round((after.heapUsed - atStart.heapUsed) / Math.max(1, RECORDS)), unit: 'bytes', target: null, pass: null });
  // RSS beyond the heap's pages: buffers outside the heap, and what the allocator keeps after freeing.
  results.push({ name: '  (JS heap reserved, heapTotal)', value: mib(after.heapTotal), unit: 'MiB', target: null, pass: null });
  results.push({ name: '  (outside the heap: external)', value: mib(after.external), unit: 'MiB', target: null, pass: null });
  results.push({ name: '  (load average after)', value: round(loadavg()[0]!, 2), unit: 'runnable', target: null, pass: null });
  // What the process holds once quiet: it gives freed pages back after an idle interval (lib/process/release-memory.ts).
  await new Promise((resolve) => setTimeout(resolve, IDLE_READING_MS));
  const idle = await server.memory();
  const idleName = `${RECORDS.toLocaleString('en-US')} cached delivered records: RSS ${IDLE_READING_MS / 1000} s after the last lookup (idle)`;
  results.push({ name: idleName, value: mib(idle.rss), unit: 'MiB', target: `<= ${TARGET_RECORDS_RSS_MIB}`, pass: mib(idle.rss) <= TARGET_RECORDS_RSS_MIB });
  results.push({ name: '  (JS heap used then)', value: mib(idle.heapUsed), unit: 'MiB', target: null, pass: null });
  results.push({ name: '  (JS heap reserved then)', value: mib(idle.heapTotal), unit: 'MiB', target: null, pass: null });
  // Asked again, one at a time: the latest are in memory, the first were let go and come back from
  // their files (no carrier poll). The median latency, as the rate of a short run is too coarse.
  const again = async (from: number, amount: number, what: string) => {
    let next = from;
    const figures = await load(server.url, {
      amount, connections: 1, headers: { 'x-api-key': key },
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: path(next++) }) }],
    }, `records run, ${what}`);
    return round(percentile(figures.latencies, 50), 2);
  };
  const asked = Math.min(2_000, RECORDS);
  results.push({ name: `the last ${asked.toLocaleString('en-US')} asked again (held in memory): median latency`, value: await again(RECORDS - asked, asked, 'last asked again'), unit: 'ms', target: null, pass: null });
  results.push({ name: `the first ${asked.toLocaleString('en-US')} asked again (read back from their files): median latency`, value: await again(0, asked, 'first asked again'), unit: 'ms', target: null, pass: null });
  return results;
}

/**
 * The spread load (SPREAD_KEYS keys × SPREAD_AWBS cached consignments) for SPREAD_LOAD_SECONDS on
 * a fresh embedded server: the live heap (after a full GC) at its start and end must be within
 * TARGET_SPREAD_HEAP_GROWTH (nothing may grow per request).
 */
async function spreadHeapRun(server: Server): Promise<BenchResult[]> {
  const lookups = await spreadLookups(server, true);
  await load(server.url, { ...lookups.options, duration: WARMUP_SECONDS }, 'spread heap warm-up');
  const atStart = await server.memory();
  let requests = 0;
  for (let left = SPREAD_LOAD_SECONDS; left > 0; left -= 60) {
    requests += (await load(server.url, { ...lookups.options, duration: Math.min(60, left) }, 'spread heap run')).total;
  }
  const after = await server.memory();
  const growth = (after.heapUsed - atStart.heapUsed) / atStart.heapUsed;
  return [
    { name: `spread load ${SPREAD_LOAD_SECONDS} s (${requests.toLocaleString('en-US')} lookups): JS heap at start`, value: mib(atStart.heapUsed), unit: 'MiB', target: null, pass: null },
    { name: '  (JS heap at the end)', value: mib(after.heapUsed), unit: 'MiB', target: null, pass: null },
    { name: '  (growth)', value: round(100 * growth, 1), unit: '%', target: `<= ${100 * TARGET_SPREAD_HEAP_GROWTH}`, pass: growth <= TARGET_SPREAD_HEAP_GROWTH },
    { name: '  (RSS at start)', value: mib(atStart.rss), unit: 'MiB', target: null, pass: null },
    { name: '  (RSS at the end)', value: mib(after.rss), unit: 'MiB', target: null, pass: null },
    { name: '  (load average after)', value: round(loadavg()[0]!, 2), unit: 'runnable', target: null, pass: null },
  ];
}

async function sortBySize(dir: string, names: string[]): Promise<string[]> {
  const sizes = await Promise.all(names.map(async (n) => ({ n, size: (await stat(join(dir, n))).size })));
  return sizes.sort((a, b) => b.size - a.size).map((s) => s.n);
}

/** Where a server's CPU time went (self time by function and by package), from its .cpuprofile. */
async function printProfile(name: string, dir: string): Promise<void> {
  // One profile per thread, should a server start workers: the main thread's is the biggest.
  const files = await sortBySize(dir, (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')));
  if (files.length === 0) {
    console.log(`(no CPU profile written for ${name})`);
    return;
  }
  const profile = JSON.parse(await readFile(join(dir, files[0]!), 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const area = (url: string, fn: string) => {
    if (!url) return fn.startsWith('(') ? fn : '(native)';
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1]!;
    if (url.startsWith('node:')) return 'node internals';
    return url.replace(/^file:\/\//, '').replace(REPO_ROOT, '');
  };
  const frame = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${area(n.callFrame.url, n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`;
  const self = new Map<string, number>();
  const selfByArea = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  for (const id of profile.samples) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') continue;
    total += 1;
    self.set(frame(node), (self.get(frame(node)) ?? 0) + 1);
    const a = area(node.callFrame.url, node.callFrame.functionName);
    selfByArea.set(a, (selfByArea.get(a) ?? 0) + 1);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = frame(byId.get(at)!);
      if (!seen.has(f)) { seen.add(f); inclusive.set(f, (inclusive.get(f) ?? 0) + 1); }
    }
  }
  const top = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) => [...m]
    .filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, v]) => `  ${(100 * v / total).toFixed(1).padStart(5)}%  ${k}`).join('\n');
  console.log(`\n### CPU profile of ${name} (${total} busy samples; ${join(dir, files[0]!)})`);
  console.log(`self time by package / file:\n${top(selfByArea, 15)}`);
  console.log(`self time by function:\n${top(self, 20)}`);
  console.log(`inclusive time, project code and logging:\n${top(inclusive, 25, (k) => /apps\/|lib\/|pino|sonic-boom|fastify \S*reply|onSend/.test(k))}`);
  console.log(`flame graph (inclusive share of busy samples, frames of 2 % and more):\n${textFlameGraph(profile, frame).join('\n')}`);
}

/** One ratio of the side-by-side summary printed at the end of the run. */
interface RatioRow { load: string; server: string; ratio: number; target: number; p99: number; p99Target: number; load1: number }
const ratioRows: RatioRow[] = [];

/** The ratios side by side, each with the load average measured beside it. */
function printRatioSummary(): void {
  if (ratioRows.length === 0) return;
  console.log('\n### Cached lookups ÷ bare route, side by side (load average beside each)');
  console.log('| load | server | ratio | target | p99 ms | p99 target | load average |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of ratioRows) {
    console.log(`| ${r.load} | ${r.server} | ${r.ratio.toFixed(2)} | ≥ ${r.target} | ${r.p99.toFixed(1)} | ≤ ${r.p99Target} | ${r.load1.toFixed(2)} |`);
  }
}

const SPREAD_TARGETS: Record<string, number> = { redis: TARGET_SPREAD_REDIS_RATIO, embedded: TARGET_SPREAD_EMBEDDED_RATIO, 'redis-cluster': TARGET_CLUSTER_RATIO };

/**
 * The spread load (SPREAD_KEYS keys × SPREAD_AWBS consignments) on bare Fastify and each API,
 * side by side: requests/s, ratio to bare and p99. The Redis Cluster API (the 3 masters of
 * `npm run services`) is measured here only: with lookups of many keys, where it must send one
 * script call per key (one Redis sends one for the whole turn).
 */
async function spreadRun(bare: Server, apis: Server[]): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const targets = [{ server: bare, lookups: await spreadLookups(bare, false) }];
  for (const server of apis) targets.push({ server, lookups: await spreadLookups(server, true) });
  const spread = await measureSideBySide(targets);
  results.push({ name: `bare Fastify, ${SPREAD_AWBS} consignments in turn: requests/s`, value: round(spread.get(bare)!.requestsPerSecond), unit: 'req/s', target: null, pass: null });
  for (const s of apis) {
    const rate = spread.get(s)!.requestsPerSecond;
    results.push({ name: `API ${s.name} mode, ${SPREAD_KEYS} keys × ${SPREAD_AWBS} consignments: requests/s`, value: round(rate), unit: 'req/s', target: null, pass: null });
    const ratio = rate / spread.get(bare)!.requestsPerSecond;
    const target = SPREAD_TARGETS[s.name] ?? 0;
    const p99Target = s.name === 'embedded' ? TARGET_P99_MS : TARGET_REDIS_P99_MS;
    results.push({ name: `  (ratio to bare, same requests)`, value: round(ratio, 2), unit: '', target: `>= ${target}`, pass: ratio >= target });
    results.push({ name: `  (latency p99, ${CONNECTIONS} connections)`, value: round(spread.get(s)!.p99, 2), unit: 'ms', target: `<= ${p99Target}`, pass: spread.get(s)!.p99 <= p99Target });
    ratioRows.push({ load: `${SPREAD_KEYS} keys × ${SPREAD_AWBS} AWBs`, server: s.name, ratio, target, p99: spread.get(s)!.p99, p99Target, load1: spread.get(s)!.load1 });
  }
  return results;
}

/**
 * --cluster-only: the spread run of bare Fastify, the API on one Redis and on the Redis Cluster,
 * nothing else (a short run to compare the two Redis deployments).
 */
async function clusterRun(tmp: string, servers: Server[]): Promise<BenchResult[]> {
  const redis = await tracked(servers, startServer('redis', 'api.ts', serverEnv({ REDIS_URL: redisUrl(), DATA_DIR: join(tmp, 'data-redis') }), null));
  const cluster = await tracked(servers, startServer('redis-cluster', 'api.ts', serverEnv({ REDIS_URL: redisClusterUrl(), DATA_DIR: join(tmp, 'data-cluster') }), null));
  const key = await createBenchKey(redis);
  await track(redis, key);
  const bodyFile = join(tmp, 'record.json');
  await writeFile(bodyFile, (await track(redis, key)).text);
  const bare = await tracked(servers, startServer('bare', 'bare.ts', serverEnv({ BENCH_BODY_FILE: bodyFile }), null));
  return spreadRun(bare, [redis, cluster]);
}

/** The three servers side by side (and their CPU profiles with --profile); stops them at the end. */
async function throughputRun(tmp: string, servers: Server[], profiling: boolean): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const profileDir = (name: string) => (profiling ? join(tmp, `profile-${name}`) : null);
  const redis = await tracked(servers, startServer('redis', 'api.ts', serverEnv({ REDIS_URL: redisUrl(), DATA_DIR: join(tmp, 'data-redis') }), profileDir('redis')));
  const embedded = await tracked(servers, startServer('embedded', 'api.ts', serverEnv({ DATA_DIR: join(tmp, 'data-embedded') }), profileDir('embedded')));
  const keys = new Map<Server, string>();
  for (const server of [redis, embedded]) {
    const key = await createBenchKey(server);
    keys.set(server, key);
    if ((await track(server, key)).cached) throw new Error(`${server.name}: the first lookup came from a cache`);
    if (!(await track(server, key)).cached) throw new Error(`${server.name}: the second lookup missed the cache`);
  }
  // The reference answers exactly what the API answered for a cached lookup.
  const body = (await track(embedded, keys.get(embedded)!)).text;
  const bodyFile = join(tmp, 'record.json');
  await writeFile(bodyFile, body);
  const bare = await tracked(servers, startServer('bare', 'bare.ts', serverEnv({ BENCH_BODY_FILE: bodyFile }), profileDir('bare')));
  const bareBody = await (await fetch(`${bare.url}${TRACK_PATH}`)).text();
  if (bareBody !== body) throw new Error('bare Fastify does not answer the same body as the API');
  results.push({ name: 'response body (one cached tracking record)', value: Buffer.byteLength(body), unit: 'bytes', target: null, pass: null });

  const figures = await measureSideBySide([bare, redis, embedded].map((server) => ({ server, lookups: hotLookup(keys.get(server) ?? null) })));
  const f = (s: Server) => figures.get(s)!;

  for (const s of [bare, redis, embedded]) {
    const label = s === bare ? 'bare Fastify, same JSON body' : `API ${s.name} mode, cached lookup`;
    results.push({ name: `${label}: requests/s`, value: round(f(s).requestsPerSecond), unit: 'req/s', target: null, pass: null });
  }
  for (const s of [bare, redis, embedded]) {
    const label = s === bare ? 'bare Fastify' : `API ${s.name} mode`;
    results.push({ name: `${label}: server CPU per request`, value: round(f(s).cpuMicrosPerRequest, 1), unit: 'µs', target: null, pass: null });
  }
  // What the throughput ratios would be with a core of its own for each server: this shared
  // machine's other load changes requests/s, much less the CPU each request costs.
  results.push({ name: 'CPU per request bare / API Redis mode (Redis server not counted)', value: round(f(bare).cpuMicrosPerRequest / f(redis).cpuMicrosPerRequest, 2), unit: '', target: null, pass: null });
  results.push({ name: 'CPU per request bare / API embedded mode', value: round(f(bare).cpuMicrosPerRequest / f(embedded).cpuMicrosPerRequest, 2), unit: '', target: null, pass: null });
  const redisRatio = f(redis).requestsPerSecond / f(bare).requestsPerSecond;
  const embeddedRatio = f(embedded).requestsPerSecond / f(bare).requestsPerSecond;
  ratioRows.push({ load: 'one key, one AWB', server: 'redis', ratio: redisRatio, target: TARGET_REDIS_RATIO, p99: f(redis).p99, p99Target: TARGET_REDIS_P99_MS, load1: f(redis).load1 });
  ratioRows.push({ load: 'one key, one AWB', server: 'embedded', ratio: embeddedRatio, target: TARGET_EMBEDDED_RATIO, p99: f(embedded).p99, p99Target: TARGET_P99_MS, load1: f(embedded).load1 });
  results.push({ name: 'ratio API Redis mode / bare', value: round(redisRatio, 2), unit: '', target: `>= ${TARGET_REDIS_RATIO}`, pass: redisRatio >= TARGET_REDIS_RATIO });
  results.push({ name: 'ratio API embedded mode / bare', value: round(embeddedRatio, 2), unit: '', target: `>= ${TARGET_EMBEDDED_RATIO}`, pass: embeddedRatio >= TARGET_EMBEDDED_RATIO });
  for (const s of [bare, redis, embedded]) {
    const label = s === bare ? 'bare Fastify' : `API ${s.name} mode`;
    const limit = s === redis ? TARGET_REDIS_P99_MS : TARGET_P99_MS;
    const target = s === bare ? null : `<= ${limit}`;
    results.push({ name: `${label}: latency p50 (${CONNECTIONS} connections)`, value: round(f(s).p50, 2), unit: 'ms', target: null, pass: null });
    results.push({ name: `${label}: latency p99 (${CONNECTIONS} connections)`, value: round(f(s).p99, 2), unit: 'ms', target, pass: target ? f(s).p99 <= limit : null });
  }

  // The same lookups at a moderate offered rate: latency when the server is not saturated.
  for (const s of [redis, embedded]) {
    const { latencies, maxLateMs } = await openLoop(s, keys.get(s)!, MODERATE_RATE, MODERATE_SECONDS);
    const sorted = latencies.sort((a, b) => a - b);
    results.push({ name: `API ${s.name} mode: latency p50 at ${MODERATE_RATE} req/s offered`, value: round(percentile(sorted, 50), 2), unit: 'ms', target: null, pass: null });
    results.push({ name: `API ${s.name} mode: latency p99 at ${MODERATE_RATE} req/s offered`, value: round(percentile(sorted, 99), 2), unit: 'ms', target: null, pass: null });
    results.push({ name: `  (load generator's latest send in that run)`, value: round(maxLateMs, 1), unit: 'ms late', target: null, pass: null });
  }

  const cluster = await tracked(servers, startServer('redis-cluster', 'api.ts', serverEnv({ REDIS_URL: redisClusterUrl(), DATA_DIR: join(tmp, 'data-cluster') }), profileDir('redis-cluster')));
  results.push(...await spreadRun(bare, [redis, cluster, embedded]));

  // Stop everything before the memory run, which starts from a fresh server.
  for (const s of servers.splice(0)) {
    const code = await s.stop();
    if (code !== 0) throw new Error(`${s.name} server exited with ${code}`);
  }
  if (profiling) {
    await printProfile('bare Fastify', profileDir('bare')!);
    await printProfile('API Redis mode', profileDir('redis')!);
    await printProfile('API Redis Cluster mode', profileDir('redis-cluster')!);
    await printProfile('API embedded mode', profileDir('embedded')!);
  }

  return results;
}

export async function benchApi(): Promise<BenchResult[]> {
  // BENCH_CPU_PROF=1 is --profile for runs whose arguments are fixed (a script, npm run bench).
  const profiling = process.argv.includes('--profile') || process.env.BENCH_CPU_PROF === '1';
  const tmp = await mkdtemp(join(tmpdir(), 'bench-api-'));
  const servers: Server[] = [];
  try {
    const results: BenchResult[] = [];
    const [load1] = loadavg();
    results.push({ name: 'machine load average (1 min) before the run', value: round(load1!, 2), unit: 'runnable', target: null, pass: null });

    if (process.argv.includes('--cluster-only')) return [...results, ...await clusterRun(tmp, servers)];
    if (process.argv.includes('--spread-heap-only')) {
      const spread = await tracked(servers, startServer('embedded-spread-heap', 'api.ts', serverEnv({ DATA_DIR: join(tmp, 'data-spread-heap') }), null));
      return [...results, ...await spreadHeapRun(spread)];
    }
    if (process.argv.includes('--records-only')) {
      const records = await tracked(servers, startServer('embedded-records', 'api.ts', recordsEnv(tmp), null));
      return [...results, ...await recordsRun(records, await createBenchKey(records))];
    }
    if (process.argv.includes('--batch-only')) return [...results, ...await batchRun(tmp, servers)];
    if (!process.argv.includes('--memory-only')) {
      results.push(...await throughputRun(tmp, servers, profiling));
      results.push(...await batchRun(tmp, servers));
    }
    if (process.argv.includes('--skip-memory')) return results;
    const fresh = await tracked(servers, startServer('embedded-memory', 'api.ts', serverEnv({ DATA_DIR: join(tmp, 'data-memory') }), null));
    results.push(...await memoryRun(fresh, await createBenchKey(fresh)));
    results.push({ name: 'in-process cache bound (CACHE_MAX_BYTES default)', value: mib(DEFAULT_CACHE_MAX_BYTES), unit: 'MiB', target: null, pass: null });
    await fresh.stop();
    const records = await tracked(servers, startServer('embedded-records', 'api.ts', recordsEnv(tmp), null));
    results.push(...await recordsRun(records, await createBenchKey(records)));
    await records.stop();
    const spread = await tracked(servers, startServer('embedded-spread-heap', 'api.ts', serverEnv({ DATA_DIR: join(tmp, 'data-spread-heap') }), null));
    results.push(...await spreadHeapRun(spread));
    return results;
  } finally {
    printRatioSummary();
    for (const s of servers) await s.stop();
    if (!profiling) await rm(tmp, { recursive: true, force: true });
  }
}
