/**
 * The client as an integrator gets it: `npm pack` builds it (prepack: tsc → dist/*.js + *.d.ts) into
 * a tarball, which is installed into an empty project in a temporary folder, type-checked there as
 * TypeScript against its declarations, and run as plain JavaScript against a running server on the
 * machine's own Node (20 here: no type stripping at all) and on the project's (24: none under
 * node_modules). The installed copy is the tarball's, never a link to this checkout.
 *
 * No registry is asked: the client's declared dependencies (and theirs) are packed from this
 * project's node_modules and offered to an `npm install --offline`, so only what the package
 * declares is there to import.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../../../apps/api/testutil/harness.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const PACKAGE_DIR = join(ROOT, 'packages/client');
const PROJECT_BIN = join(ROOT, 'node_modules/.bin');
/** npm and tsc run on the project's Node (first on PATH). */
const env = { ...process.env, PATH: `${PROJECT_BIN}${delimiter}${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' };

/** The client's dependencies and theirs, as installed in this project (name → folder). */
function dependencyClosure(): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (packageJson: string) => {
    const { dependencies = {} } = JSON.parse(readFileSync(packageJson, 'utf8')) as { dependencies?: Record<string, string> };
    for (const name of Object.keys(dependencies)) {
      if (found.has(name)) continue;
      const dir = join(ROOT, 'node_modules', name);
      found.set(name, dir);
      visit(join(dir, 'package.json'));
    }
  };
  visit(join(PACKAGE_DIR, 'package.json'));
  return found;
}

/** A `node` on PATH that is not the project's own: the machine's. */
function machineNode(): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || resolve(dir).startsWith(ROOT)) continue;
    if (existsSync(join(dir, 'node'))) return join(dir, 'node');
  }
  return null;
}

const CONSUMER_JS = `import { createTrackingClient, verifyWebhook } from '@india-tracking/client';
const client = createTrackingClient({ baseUrl: process.env.TRACKING_API_URL, apiKey: process.env.TRACKING_API_KEY });
const { data, error, response } = await client.GET('/v1/track/{carrier}/{awb}', { params: { path: { carrier: 'delhivery', awb: '1234567890102' } } });
const bad = await client.GET('/v1/track/{carrier}/{awb}', { params: { path: { carrier: 'delhivery', awb: 'x' } } });
console.log(JSON.stringify({
  node: process.version, status: response.status, awb: data?.awb, tracking: data?.status, error: error ?? null,
  bad: [bad.response.status, bad.error?.error.code], verify: typeof verifyWebhook,
}));
`;

/** Compiled by tsc in the consumer project: wrong types there fail the test. */
const CONSUMER_TS = `import { createTrackingClient, type TrackingRecord } from '@india-tracking/client';
const client = createTrackingClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'trk_test_x' });
export async function statusOf(awb: string): Promise<TrackingRecord['status'] | null> {
  const { data } = await client.GET('/v1/track/{carrier}/{awb}', { params: { path: { carrier: 'delhivery', awb } } });
  return data?.status ?? null;
}
`;

describe('the packed client, installed into an empty project', () => {
  let h: ApiHarness;
  let baseUrl: string;
  let key: string;
  let work: string;
  let consumer: string;

  beforeAll(async () => {
    h = await startApiHarness();
    baseUrl = await h.listen();
    key = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 100 })).key;
    work = await mkdtemp(join(tmpdir(), 'client-install-'));
    const tarballs = join(work, 'tarballs');
    consumer = join(work, 'consumer');
    await run('mkdir', ['-p', tarballs, consumer]);
    await run('npm', ['pack', '--pack-destination', tarballs], { cwd: PACKAGE_DIR, env });
    for (const dir of dependencyClosure().values()) await run('npm', ['pack', '--ignore-scripts', '--pack-destination', tarballs, dir], { cwd: work, env });
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    const files = (await readdir(tarballs)).map((name) => join(tarballs, name));
    await run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', ...files], { cwd: consumer, env });
  }, 120_000);
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
    await h?.close();
  });

  it('holds JavaScript and declarations only, and says its version', async () => {
    const installed = join(consumer, 'node_modules/@india-tracking/client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string };
    expect(manifest.version).toBe((JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version);
    expect((await readdir(join(installed, 'dist'))).sort()).toEqual(['index.d.ts', 'index.js', 'schema.d.ts', 'schema.js']);
  });

  it('type-checks in a TypeScript project against its declarations', async () => {
    await writeFile(join(consumer, 'use.ts'), CONSUMER_TS);
    const tsc = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', 'use.ts'];
    await run('tsc', tsc, { cwd: consumer, env });
    // And a wrong carrier is refused there: the types are the API's, not `any`.
    await writeFile(join(consumer, 'wrong.ts'), CONSUMER_TS.replace("carrier: 'delhivery'", "carrier: 'no-such-carrier'"));
    await expect(run('tsc', [...tsc.slice(0, -1), 'wrong.ts'], { cwd: consumer, env })).rejects.toMatchObject({ stdout: expect.stringContaining('no-such-carrier') });
  }, 60_000);

  it("calls the running server on the machine's Node and on the project's", async () => {
    await writeFile(join(consumer, 'track.mjs'), CONSUMER_JS);
    const nodes = [machineNode(), process.execPath];
    expect(nodes[0], 'a node on PATH besides the project\'s').not.toBeNull();
    for (const node of nodes) {
      const { stdout } = await run(node!, ['track.mjs'], { cwd: consumer, env: { ...env, TRACKING_API_URL: baseUrl, TRACKING_API_KEY: key } });
      const answer = JSON.parse(stdout) as Record<string, unknown>;
      expect(answer).toMatchObject({ status: 200, awb: '1234567890102', tracking: expect.any(String), error: null, bad: [400, 'invalid_awb'], verify: 'function' });
    }
  }, 60_000);
});
