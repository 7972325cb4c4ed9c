/**
 * The admin CLI end to end: the real API in this process (embedded store in a temp dir, listening
 * on an ephemeral port) and the CLI as a child process, exactly as `npm run cli` runs it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../lib/config/index.ts';
import { buildApp } from '../api/app.ts';
import { createApiRuntime, type ApiRuntime } from '../api/context/runtime.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TOKEN = 'cli-test-admin-token-0123456789';
/** Tests that start the CLI many times (about a second per start, more on a busy machine). */
const SLOW = 180_000;

let dataDir: string;
let runtime: ApiRuntime;
let app: FastifyInstance;
let url: string;
let port: number;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cli-'));
  runtime = await createApiRuntime(loadEnv({ DATA_DIR: dataDir, ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' }), { sandboxUrl: null, liveTarget: 'sandbox' });
  app = await buildApp(runtime.deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node apps/cli/main.ts ...args` (as `npm run cli` does); the environment holds no ADMIN_TOKEN or PORT unless given. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base = { ...process.env };
  delete base.ADMIN_TOKEN;
  delete base.PORT;
  return new Promise((done) => {
    execFile(process.execPath, ['apps/cli/main.ts', ...args], { cwd: ROOT, env: { ...base, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

const withApi = (...args: string[]) => cli([...args, '--url', url, '--token', TOKEN]);

function json(run: Run): Record<string, unknown> & { period: Record<string, unknown>; rate_limits: Record<string, unknown> } {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
}

describe('npm run cli -- keys ...', { timeout: SLOW }, () => {
  it('creates, shows, suspends, resumes, renews and revokes a key through the admin API', async () => {
    const created = await withApi(
      'keys', 'create', '--plan', 'trial', '--mode', 'test', '--email', 'a@b.co',
      '--lookups-limit', '250', '--daily-quota', '40', '--burst', '3',
      '--period-start', '2026-01-01T00:00:00Z', '--period-end', '2099-01-01T00:00:00+05:30',
    );
    const key = json(created);
    expect(created.stdout).toContain('\n  "key": '); // pretty-printed
    expect(key.key).toMatch(/^trk_test_[A-Za-z0-9]{32}$/);
    const prefix = key.key_prefix as string;
    expect(prefix).toBe((key.key as string).slice(0, 16));
    expect(key).toMatchObject({ plan: 'trial', status: 'active', email: 'a@b.co', mode: 'test' });
    expect(key.period).toMatchObject({ start: '2026-01-01T00:00:00.000Z', end: '2098-12-31T18:30:00.000Z', lookups_limit: 250, lookups_used: 0 });
    expect(key.rate_limits).toEqual({ burst_per_second: 3, daily_quota: 40 });

    // The store behind the API has it: the CLI went through HTTP to the same runtime.
    expect((await runtime.deps.access.getByPrefix(prefix))?.email).toBe('a@b.co');

    const shown = json(await withApi('keys', 'show', prefix));
    expect(shown).toMatchObject({ key_prefix: prefix, plan: 'trial', status: 'active', email: 'a@b.co', mode: 'test' });
    expect(shown).not.toHaveProperty('key');

    expect(json(await withApi('keys', 'suspend', prefix)).status).toBe('suspended');
    expect((await runtime.deps.access.getByPrefix(prefix))?.status).toBe('suspended');
    expect(json(await withApi('keys', 'resume', prefix)).status).toBe('active');

    const before = Date.now();
    const renewed = json(await withApi('keys', 'renew', prefix, '--plan', 'growth'));
    expect(renewed).toMatchObject({ key_prefix: prefix, plan: 'growth', status: 'active' });
    expect(renewed.period).toMatchObject({ lookups_limit: 4000, lookups_used: 0 });
    expect(Date.parse(renewed.period.start as string)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(renewed.period.end as string) - Date.parse(renewed.period.start as string)).toBe(30 * 86_400_000);

    const kept = json(await withApi('keys', 'renew', prefix));
    expect(kept).toMatchObject({ plan: 'growth', period: { lookups_limit: 4000 } });

    expect(json(await withApi('keys', 'revoke', prefix)).status).toBe('revoked');
    const refused = await withApi('keys', 'resume', prefix);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`Key ${prefix} is revoked; revocation is final.`);
  });

  it('takes the token from ADMIN_TOKEN and the URL from PORT by default', async () => {
    const run = await cli(['keys', 'create', '--plan', 'starter', '--mode', 'live', '--email', 'env@example.com'], { ADMIN_TOKEN: TOKEN, PORT: String(port) });
    expect(json(run)).toMatchObject({ plan: 'starter', status: 'active', mode: 'live', rate_limits: { daily_quota: 300 } });
  });

  it('without --token or ADMIN_TOKEN, takes the token a start kept in DATA_DIR/admin-token', async () => {
    const kept = join(dataDir, 'kept');
    mkdirSync(kept);
    writeFileSync(join(kept, 'admin-token'), `${TOKEN}\n`, { mode: 0o600 });
    const run = await cli(['keys', 'create', '--plan', 'starter', '--mode', 'test', '--email', 'kept@example.com', '--url', url], { DATA_DIR: kept });
    expect(run.code, run.stderr).toBe(0);
    expect(json(run)).toMatchObject({ email: 'kept@example.com' });
  });

  it('prints the API error message on stderr and exits 1 on a wrong token', async () => {
    const run = await cli(['keys', 'show', 'trk_live_AAAAAAA', '--url', url, '--token', 'wrong-token-wrong-token']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('error: Admin calls need Authorization: Bearer <ADMIN_TOKEN>. (unauthorized, HTTP 401)\n');
  });

  it('exits 1 with the API message for refusals: unknown key, invalid input', async () => {
    const missing = await withApi('keys', 'show', 'trk_live_Nope000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No key with prefix trk_live_Nope000.');
    const invalid = await withApi('keys', 'create', '--plan', 'platinum', '--mode', 'test', '--email', 'a@b.co');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^error: Invalid key request: plan: .*\(bad_request, HTTP 400\)\n$/);
  });

  it('exits 1 with a clear message when the API cannot be reached', async () => {
    const run = await cli(['keys', 'show', 'trk_live_AAAAAAA', '--url', 'http://127.0.0.1:1', '--token', TOKEN]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Cannot reach the admin API at http://127.0.0.1:1');
  });

  it('exits 2 with the usage text on usage errors, before calling the API', async () => {
    const cases: [string[], string][] = [
      [['keys', 'create', '--plan', 'trial', '--mode', 'test'], 'keys create needs --email.'],
      [['keys', 'show'], 'keys show needs a key prefix'],
      [['keys', 'show', 'trk_live_AAAAAAA', 'trk_live_BBBBBBB'], 'keys show takes one key prefix'],
      [['keys', 'create', '--plan', 'trial', '--mode', 'test', '--email', 'a@b.co', '--daily-quota', 'lots'], '--daily-quota must be a positive whole number'],
      [['keys', 'suspend', 'trk_live_AAAAAAA', '--plan', 'growth'], 'keys suspend does not take --plan.'],
      [['keys', 'explode'], 'Unknown command "keys explode".'],
      [['keys', 'show', 'trk_live_AAAAAAA', '--colour'], "Unknown option '--colour'"],
      [[], 'No command given.'],
    ];
    for (const [args, message] of cases) {
      const run = await cli([...args, '--url', url, '--token', TOKEN]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(message);
      expect(run.stderr).toContain('Usage: npm run cli -- <command> [options]');
    }
    // A DATA_DIR without a kept token (the repository's ./data may hold one of a local start).
    const noToken = await cli(['keys', 'show', 'trk_live_AAAAAAA', '--url', url], { DATA_DIR: join(dataDir, 'no-token-here') });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('No admin token: pass --token or set ADMIN_TOKEN');
    // None of these created a key.
    expect((await runtime.deps.access.list()).map((k) => k.email).sort()).toEqual(['a@b.co', 'env@example.com', 'kept@example.com']);
  });

  it('prints the usage text on --help and exits 0', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('keys renew <key_prefix> [--plan <plan>]');
    // Every command the CLI runs is listed, the delivery model's backtest included.
    for (const command of ['keys create', 'lanes <origin_pincode>', 'analyze <shipments', 'predict backtest']) expect(run.stdout).toContain(command);
    const predict = await cli(['predict', '--help']);
    expect(predict.code).toBe(0);
    expect(predict.stdout).toContain('--split <ISO>');
  });
});
