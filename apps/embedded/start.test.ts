/**
 * On a fresh clone, `npm install && npm start` serves the printed curl line successfully — and a
 * restart on the same DATA_DIR loses no keys and no usage (contracts.md "Starting it").
 *
 * Runs what `npm start` runs (`tsx apps/embedded/main.ts`) as a real process, with none of the
 * project's environment variables set but a temp DATA_DIR and a free PORT, and the printed curl line
 * with the real curl.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvSchema } from '../../lib/config/index.ts';
import { freePort } from '../../lib/testing/ports.ts';
import { TrackingRecordSchema, UsageRecordSchema, type UsageRecord } from '../../lib/schemas/index.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = join(REPO_ROOT, 'node_modules/.bin/tsx');
/** Bounds on waiting, so a hang fails the test instead of stalling the run (not speed checks). */
const START_BOUND_MS = 90_000;
const EXIT_BOUND_MS = 30_000;

interface Running {
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Started extends Running {
  /** The curl line of the banner, as printed (without its indentation). */
  curlLine: string;
  trialKey: string;
  base: string;
}

const children: ChildProcess[] = [];

/** The environment of someone who just cloned the project: none of its variables set. */
function freshCloneEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [...Object.keys(EnvSchema.shape), 'PAYMENT_URL', 'MAIL_FROM', 'NOTICE_CRON']) delete env[name];
  return { ...env, DATA_DIR: dataDir, PORT: String(port) };
}

/** `npm start` (what its script runs), until the banner's curl line is printed. */
async function start(dataDir: string, services: NodeJS.ProcessEnv = {}): Promise<Started> {
  const port = await freePort();
  const child = spawn(TSX, ['apps/embedded/main.ts'], { cwd: REPO_ROOT, env: { ...freshCloneEnv(dataDir, port), ...services }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const running: Running = { child, output: () => output, exited };

  const curlLine = await new Promise<string>((resolve, reject) => {
    const bound = setTimeout(() => { cleanup(); reject(new Error(`no curl line printed within ${START_BOUND_MS} ms:\n${output}`)); }, START_BOUND_MS);
    const look = () => {
      // Only a whole line: output may end mid-line, between two chunks of the pipe.
      const line = /^\s*(curl .+)\n/m.exec(output)?.[1];
      if (line) { cleanup(); resolve(line.trim()); }
    };
    const onExit = (code: number | null) => { cleanup(); reject(new Error(`npm start exited (${code}) before printing a curl line:\n${output}`)); };
    const cleanup = () => { clearTimeout(bound); child.stdout!.off('data', look); child.off('exit', onExit); };
    child.stdout!.on('data', look);
    child.once('exit', onExit);
    look();
  });
  const trialKey = /^\s*trial key:\s+(trk_test_[A-Za-z0-9]{32})\b/m.exec(output)?.[1];
  expect(trialKey, output).toBeDefined();
  expect(curlLine).toContain(trialKey!);
  const base = /listening on (http:\/\/\S+)/.exec(output)?.[1];
  expect(base, output).toBe(`http://127.0.0.1:${port}`);
  return { ...running, curlLine, trialKey: trialKey!, base: base! };
}

/** SIGTERM, then the exit (bounded). */
async function stop(running: Running): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  running.child.kill('SIGTERM');
  let bound: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => { bound = setTimeout(() => resolve('timeout'), EXIT_BOUND_MS); });
  const result = await Promise.race([running.exited, timedOut]);
  clearTimeout(bound);
  if (result === 'timeout') throw new Error(`npm start did not exit within ${EXIT_BOUND_MS} ms of SIGTERM:\n${running.output()}`);
  return result;
}

/** Runs a command line in a shell, as a person pasting it would; resolves with its stdout. */
function shell(line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', line], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${line}\nfailed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

async function usage(base: string, key: string): Promise<UsageRecord> {
  const res = await fetch(`${base}/v1/usage`, { headers: { 'x-api-key': key } });
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  const parsed = UsageRecordSchema.safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  return parsed.data!;
}

describe('npm start (the embedded default)', () => {
  let dataDir: string | undefined;

  afterAll(async () => {
    // Only if a test failed half-way: end what this file started, by its own pid.
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the printed curl line; SIGTERM exits 0; a restart keeps the key and its usage', { timeout: 300_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-'));
    const first = await start(dataDir);
    expect(first.curlLine).toMatch(/^curl -s -H "X-API-Key: trk_test_[A-Za-z0-9]{32}" http:\/\/127\.0\.0\.1:\d+\/v1\/track\/\S+$/);

    // The printed line, run as printed; `-w` only appends the status code after the body.
    const out = await shell(`${first.curlLine} -w '\\n%{http_code}'`);
    const cut = out.lastIndexOf('\n');
    const [body, status] = [out.slice(0, cut), out.slice(cut + 1)];
    expect(status, body).toBe('200');
    const record = TrackingRecordSchema.safeParse(JSON.parse(body));
    expect(record.success ? [] : record.error.issues).toEqual([]);
    expect(first.curlLine).toContain(`/v1/track/${record.data!.carrier}/${record.data!.awb}`);

    const before = await usage(first.base, first.trialKey);
    expect(before).toMatchObject({ plan: 'trial', status: 'active', period: { lookups_used: 1, lookups_limit: 100, lookups_remaining: 99 } });

    expect(await stop(first)).toEqual({ code: 0, signal: null });

    // Started again on the same DATA_DIR: the earlier key works, with the lookup counted before.
    const second = await start(dataDir);
    expect(second.trialKey).not.toBe(first.trialKey);
    const after = await usage(second.base, first.trialKey);
    expect(after).toEqual(before);
    const again = await fetch(`${second.base}/v1/track/delhivery/1234567890102`, { headers: { 'x-api-key': first.trialKey } });
    expect(again.status).toBe(200);
    expect(TrackingRecordSchema.safeParse(await again.json()).success).toBe(true);
    expect((await usage(second.base, first.trialKey)).period).toMatchObject({ lookups_used: 2, lookups_remaining: 98 });
    // The new run's own key works too.
    expect((await usage(second.base, second.trialKey)).period.lookups_used).toBe(0);

    expect(await stop(second)).toEqual({ code: 0, signal: null });
  });

  it('with REDIS_URL, KAFKA_BROKERS and CLICKHOUSE_URL: says so, and a lookup reaches ClickHouse with no other command run', { timeout: 300_000 }, async () => {
    const services = {
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6380',
      KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
      // A database of this run's own (the path of the URL names it; migrations create it).
      CLICKHOUSE_URL: `${process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123'}/tracking_test_start_${Date.now().toString(36)}`,
    };
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-'));
    const started = await start(dataDir, services);
    expect(started.output()).toMatch(/mode:\s+distributed: Redis, Kafka and ClickHouse/);
    const res = await fetch(`${started.base}/v1/track/delhivery/1234567890104`, { headers: { 'x-api-key': started.trialKey } });
    expect(res.status).toBe(200);
    const record = TrackingRecordSchema.parse(await res.json());
    const database = new URL(services.CLICKHOUSE_URL).pathname.slice(1);
    const count = async (table: string) => {
      const query = `SELECT count() FROM ${database}.${table} WHERE awb = '${record.awb}' FORMAT TabSeparated`;
      const answer = await fetch(`${new URL(services.CLICKHOUSE_URL).origin}/?query=${encodeURIComponent(query)}`);
      return Number((await answer.text()).trim());
    };
    const deadline = Date.now() + 60_000;
    while ((await count('shipments')) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await count('carrier_polls')).toBeGreaterThan(0);
    expect(await count('events')).toBe(record.events.length);
    expect(await count('shipments')).toBeGreaterThan(0);
    expect(await stop(started)).toEqual({ code: 0, signal: null });
    await fetch(`${new URL(services.CLICKHOUSE_URL).origin}/?query=${encodeURIComponent(`DROP DATABASE IF EXISTS ${database}`)}`, { method: 'POST' });
  });
});
