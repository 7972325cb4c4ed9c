/**
 * A healthy first start of each distributed app, as `npm run <app>` runs it (`node
 * apps/<app>/main.ts`, LOG_LEVEL info, the services of `npm run services` and a ClickHouse database
 * of this run's own, which the start migrates from nothing): it prints its banner (what it is, what
 * it connects to with credentials hidden, where its health and metrics are; the API how to make a
 * key) and logs no line at warn or above, and Node prints no warning, before and while it stops;
 * the consumers also against a broker created for the test (test/services/scratch-kafka.ts), whose
 * group coordinators are still loading when they join.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_CLICKHOUSE_URL } from '../lib/clickhouse/testutil/database.ts';
import { withoutProjectEnv } from '../lib/config/index.ts';
import { TEST_BROKERS } from '../lib/kafka/testutil/broker.ts';
import { testRedisUrl } from '../lib/access/testutil/stores.ts';
import { startScratchKafka } from './services/scratch-kafka.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
// tracking_test_*: the statement recorder folds such names into one shape (lib/clickhouse/statement-recorder.ts).
const DATABASE = `tracking_test_first_start_${randomUUID().slice(0, 8)}`;
const dataDir = mkdtempSync(join(tmpdir(), 'first-start-'));
const children: ChildProcess[] = [];
const exec = promisify(execFile);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await fetch(`${TEST_CLICKHOUSE_URL}/?query=${encodeURIComponent(`DROP DATABASE IF EXISTS ${DATABASE}`)}`, { method: 'POST' });
  rmSync(dataDir, { recursive: true, force: true });
});

interface Run { output: string; stderr: string; code: number | null }

/** Starts `apps/<app>/main.ts` until `ready` matches its output, lets it settle, then SIGTERM. */
async function firstStart(script: string, env: Record<string, string>, ready: RegExp, during?: (output: string) => Promise<void>): Promise<Run> {
  const clean = withoutProjectEnv(process.env);
  const child = spawn(process.execPath, [script], {
    cwd: ROOT, env: { ...clean, LOG_LEVEL: 'info', PORT: '0', DATA_DIR: join(dataDir, script.replace(/\W/g, '_')), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; stderr += chunk; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 150_000;
  while (!ready.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${script} did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Consumers join their groups and producers get their ids after the banner: let that happen.
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  try {
    await during?.(output);
  } finally {
    child.kill('SIGTERM');
  }
  return { output, stderr, code: await exited };
}

/** Log lines at warn (40) or above, and anything Node or a library printed as a warning or error. */
function complaints(run: Run): string[] {
  const lines = run.output.split('\n');
  const loud = lines.filter((line) => {
    if (!line.startsWith('{')) return false;
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 40;
    } catch {
      return true;
    }
  });
  return [...loud, ...run.stderr.split('\n').filter((line) => line.trim() !== '')];
}

describe('a healthy first start of each app logs nothing at warn or above', () => {
  const services = async () => ({
    KAFKA_BROKERS: TEST_BROKERS, REDIS_URL: await testRedisUrl(),
    // Credentials in the URL: the banner must not print them.
    CLICKHOUSE_URL: TEST_CLICKHOUSE_URL.replace('://', '://default:@'), CLICKHOUSE_DATABASE: DATABASE,
  });

  it('normalizer, poller and dispatcher: banner with services, health and metrics; no warnings', { timeout: 400_000 }, async () => {
    const env = await services();
    // One at a time: the first migrates the database, the others find it migrated.
    for (const [app, title] of [['normalizer', /Tracking normalizer/], ['poller', /Tracking poller/], ['dispatcher', /Tracking webhook dispatcher/]] as const) {
      const run = await firstStart(`apps/${app}/main.ts`, env, /metrics: +http:\/\/127\.0\.0\.1:\d+\/metrics/);
      expect(run.output, app).toMatch(title);
      expect(run.output).toMatch(new RegExp(`Kafka: +${TEST_BROKERS.replace(/\./g, '\\.')}`));
      expect(run.output).toMatch(new RegExp(`ClickHouse: +http://\\*\\*\\*@127\\.0\\.0\\.1:\\d+ +database ${DATABASE}`));
      expect(run.output).toMatch(/health: +http:\/\/127\.0\.0\.1:\d+\/healthz/);
      expect(complaints(run), run.output).toEqual([]);
      expect(run.code, run.output).toBe(0);
    }
  });

  it('against a freshly created broker (its group coordinators still loading): normalizer and dispatcher log nothing at warn or above', {
    timeout: 400_000,
  }, async () => {
    const broker = await startScratchKafka();
    try {
      const env = { ...(await services()), KAFKA_BROKERS: broker.brokers };
      for (const app of ['normalizer', 'dispatcher']) {
        const run = await firstStart(`apps/${app}/main.ts`, env, /metrics: +http:\/\/127\.0\.0\.1:\d+\/metrics/);
        expect(complaints(run), run.output).toEqual([]);
        expect(run.code, run.output).toBe(0);
      }
    } finally {
      await broker.stop();
    }
  });

  it('the API: banner with how to make a key (the command works as printed); no warnings', { timeout: 200_000 }, async () => {
    let created = '';
    let fromDocs = '';
    const run = await firstStart('apps/api/server.ts', { ...(await services()), SANDBOX_URL: 'http://127.0.0.1:4010' }, /--email ops@example\.com.*\n/, async (output) => {
      // The banner's command, run as printed (a shell, npm run cli) against this API.
      const command = /^\s*(ADMIN_TOKEN=\S+ npm run cli -- keys create .+)$/m.exec(output)![1]!;
      created = (await exec('sh', ['-c', `${command} 2>&1`], { cwd: ROOT })).stdout;
      // The operators' page's own example (docs/operators/running.md), word for word, with the
      // token and this API's address as the environment gives them.
      const documented = /`(npm run cli -- keys create [^`]*--email [^`]+)`/.exec(readFileSync(join(ROOT, 'docs/operators/running.md'), 'utf8'))![1]!;
      const [, token, url] = /ADMIN_TOKEN=(\S+) .* --url (\S+)/.exec(command)!;
      fromDocs = (await exec('sh', ['-c', `${documented} --url ${url} 2>&1`], { cwd: ROOT, env: { ...process.env, ADMIN_TOKEN: token } })).stdout;
    });
    expect(JSON.parse(fromDocs.slice(fromDocs.indexOf('{')))).toMatchObject({ key: expect.stringMatching(/^trk_test_/), plan: 'trial' });
    expect(JSON.parse(created.slice(created.indexOf('{')))).toMatchObject({ key: expect.stringMatching(/^trk_test_/), plan: 'trial', email: 'ops@example.com' });
    expect(run.output).toMatch(/Tracking API listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(run.output).toMatch(/ADMIN_TOKEN: +\S{16,} +\(generated at this first start, kept in \S+admin-token, mode 0600/);
    expect(run.output).toMatch(/ADMIN_TOKEN=\S+ npm run cli -- keys create --plan trial --mode test --email ops@example\.com --url http:\/\/127\.0\.0\.1:\d+/);
    expect(complaints(run), run.output).toEqual([]);
    expect(run.code, run.output).toBe(0);
  });

  it('the carrier sandbox: banner; no warnings', { timeout: 100_000 }, async () => {
    const run = await firstStart('apps/carrier-sandbox/main.ts', {}, /SANDBOX_URL=http:\/\/127\.0\.0\.1:\d+ npm run api/);
    expect(run.output).toMatch(/Carrier sandbox: simulated courier endpoints/);
    expect(complaints(run), run.output).toEqual([]);
    expect(run.code, run.output).toBe(0);
  });
});
