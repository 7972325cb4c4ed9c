/**
 * The batch rows of `npm run bench -- api` (also alone: `npm run bench -- api --batch-only`): items
 * per second of 100-item batches of cached consignments (POST /v1/track/batch) against the same
 * 100 consignments as single lookups (GET /v1/track/{carrier}/{awb}, in turn), on the same server
 * with the same connections, measured in slices taken in turn so the shared machine's other load
 * falls on both alike. Both API modes (Redis, embedded). Target: batches ≥ 3× the single rate.
 */
import { join } from 'node:path';
import type { BenchResult } from './report.ts';
import { createBenchKey, load, redisUrl, serverEnv, startServer, tracked, type LoadFigures, type Server } from './harness.ts';
import { mean, percentile, round } from './stats.ts';

export const TARGET_BATCH_RATIO = 3;
const ITEMS = 100;
const CONNECTIONS = 20;
const WARMUP_SECONDS = 2;
const ROUNDS = 3;
const SLICE_SECONDS = 2;

/** 100 delhivery numbers of sandbox scenario 02 (in transit, answered at once), lanes 00-99. */
const AWBS = Array.from({ length: ITEMS }, (_, i) => `123456789${String(i).padStart(2, '0')}02`);
const BODY = JSON.stringify({ items: AWBS.map((awb) => ({ carrier: 'delhivery', awb })) });

async function postBatch(server: Server, key: string): Promise<{ status: number; cached: boolean[] }> {
  const res = await fetch(`${server.url}/v1/track/batch`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: BODY });
  const answer = (await res.json()) as { results: { status: number; tracking?: { cached: boolean } }[] };
  if (res.status !== 200 || answer.results.some((r) => r.status !== 200)) throw new Error(`${server.name}: batch answered ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
  return { status: res.status, cached: answer.results.map((r) => r.tracking!.cached) };
}

interface Slice {
  figures: LoadFigures;
  /** Server CPU (user + system) during the slice, in microseconds. */
  cpuMicros: number;
}

async function measure(server: Server, key: string): Promise<{ single: Slice[]; batch: Slice[] }> {
  const headers = { 'x-api-key': key };
  const single = (seconds: number) => load(server.url, {
    connections: CONNECTIONS, duration: seconds, headers,
    requests: AWBS.map((awb) => ({ method: 'GET' as const, path: `/v1/track/delhivery/${awb}` })),
  }, `${server.name} single lookups`);
  const batch = (seconds: number) => load(`${server.url}/v1/track/batch`, {
    connections: CONNECTIONS, duration: seconds, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: BODY,
  }, `${server.name} batches`);
  await single(WARMUP_SECONDS);
  await batch(WARMUP_SECONDS);
  const slice = async (run: (seconds: number) => Promise<LoadFigures>): Promise<Slice> => {
    const before = await server.cpu();
    const figures = await run(SLICE_SECONDS);
    return { figures, cpuMicros: (await server.cpu()) - before };
  };
  const slices = { single: [] as Slice[], batch: [] as Slice[] };
  for (let r = 0; r < ROUNDS; r++) {
    slices.single.push(await slice(single));
    slices.batch.push(await slice(batch));
  }
  return slices;
}

/** Starts a Redis-mode and an embedded API, measures both, stops them. */
export async function batchRun(tmp: string, servers: Server[]): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const redis = await tracked(servers, startServer('redis-batch', 'api.ts', serverEnv({ REDIS_URL: redisUrl(), DATA_DIR: join(tmp, 'data-batch-redis') }), null));
  const embedded = await tracked(servers, startServer('embedded-batch', 'api.ts', serverEnv({ DATA_DIR: join(tmp, 'data-batch-embedded') }), null));
  for (const server of [redis, embedded]) {
    const key = await createBenchKey(server);
    await postBatch(server, key);
    if (!(await postBatch(server, key)).cached.every(Boolean)) throw new Error(`${server.name}: a warmed batch missed the cache`);
    const { single, batch } = await measure(server, key);
    const singleItems = mean(single.map((s) => s.figures.requestsPerSecond));
    const batchItems = mean(batch.map((s) => s.figures.requestsPerSecond)) * ITEMS;
    const cpuPerItem = (slices: Slice[], perRequest: number) =>
      slices.reduce((sum, s) => sum + s.cpuMicros, 0) / slices.reduce((sum, s) => sum + s.figures.total * perRequest, 0);
    const mode = server === redis ? 'Redis' : 'embedded';
    results.push({ name: `API ${mode} mode: ${ITEMS} cached items as single lookups: items/s`, value: round(singleItems), unit: 'items/s', target: null, pass: null });
    results.push({ name: `API ${mode} mode: the same as ${ITEMS}-item batches: items/s`, value: round(batchItems), unit: 'items/s', target: null, pass: null });
    const ratio = batchItems / singleItems;
    results.push({ name: `  (ratio batch / single, ${CONNECTIONS} connections each)`, value: round(ratio, 2), unit: '', target: `>= ${TARGET_BATCH_RATIO}`, pass: ratio >= TARGET_BATCH_RATIO });
    // The server's own CPU per item: what the ratio would be if it had a core to itself (the load
    // generator runs on the same shared machine and reads every byte of the answers).
    const singleCpu = cpuPerItem(single, 1);
    const batchCpu = cpuPerItem(batch, ITEMS);
    results.push({ name: `  (server CPU per item: single lookup)`, value: round(singleCpu, 1), unit: 'µs', target: null, pass: null });
    results.push({ name: `  (server CPU per item: in a ${ITEMS}-item batch)`, value: round(batchCpu, 1), unit: 'µs', target: null, pass: null });
    results.push({ name: `  (CPU per item single / batch)`, value: round(singleCpu / batchCpu, 2), unit: '', target: null, pass: null });
    const latencies = batch.flatMap((s) => s.figures.latencies).sort((a, b) => a - b);
    results.push({ name: `  (${ITEMS}-item batch latency p50)`, value: round(percentile(latencies, 50), 1), unit: 'ms', target: null, pass: null });
    results.push({ name: `  (${ITEMS}-item batch latency p99)`, value: round(percentile(latencies, 99), 1), unit: 'ms', target: null, pass: null });
  }
  for (const s of [redis, embedded]) {
    servers.splice(servers.indexOf(s), 1);
    const code = await s.stop();
    if (code !== 0) throw new Error(`${s.name} server exited with ${code}`);
  }
  return results;
}
