/**
 * Issue 41: `npm start` killed (SIGKILL) while its first start writes the network history; the
 * next start on the same DATA_DIR seeds the whole history again and shows lane figures. Before, the
 * kill left a partial log that no later start completed (the seed ran only on an empty log), and
 * the restarted service showed no lane figures.
 *
 * Runs what `npm start` runs as a real process with none of the project's variables set (testutil/harness.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { withoutProjectEnv } from '../../lib/config/index.ts';
import { seedingPath } from '../../lib/sandbox/seed.ts';
import { pollLogPath } from '../../lib/store/poll-log.ts';
import { freePort } from '../../lib/testutil/ports.ts';
import { cleanUp, start, stop } from './testutil/harness.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Bound on waiting for the seed to begin, so a hang fails the test instead of stalling the run. */
const SEED_BOUND_MS = 90_000;

describe('npm start killed while seeding its first history', () => {
  let dataDir: string | undefined;
  let killed: ReturnType<typeof spawn> | undefined;
  afterAll(async () => {
    if (killed && killed.exitCode === null && killed.signalCode === null) killed.kill('SIGKILL');
    await cleanUp(dataDir);
  });

  it('the next start seeds the whole history again and shows lane figures', { timeout: 240_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-seed-crash-'));
    const env = { ...withoutProjectEnv(process.env), DATA_DIR: dataDir, PORT: String(await freePort()) };
    killed = spawn(process.execPath, ['apps/embedded/main.ts'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    killed.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    killed.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => killed!.once('exit', (_code, signal) => resolve(signal)));
    let ended = false;
    void exited.then(() => { ended = true; });
    const temp = seedingPath(dataDir);
    const bound = Date.now() + SEED_BOUND_MS;
    // Part way: a few MiB of the history's ~45 MiB written (a start that seeded whole ends the wait too, and fails below).
    while (!ended && Date.now() < bound && !output.includes('seeded a sandbox history') && !(existsSync(temp) && statSync(temp).size >= 4 * 1024 * 1024)) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    killed.kill('SIGKILL');
    expect(await exited, `npm start was not killed while seeding:\n${output}`).toBe('SIGKILL');
    expect(output).not.toMatch(/seeded a sandbox history/);
    expect(existsSync(pollLogPath(dataDir))).toBe(false);

    const running = await start(dataDir);
    const seeded = /seeded a sandbox history: 20000 journeys, (\d+) polls \(test mode\) in \S+ \(a seed cut short by an earlier start was redone\)/.exec(running.output());
    expect(seeded, running.output()).not.toBeNull();
    expect(existsSync(temp)).toBe(false);
    const lines = readFileSync(pollLogPath(dataDir), 'utf8').split('\n').slice(0, -1);
    expect(lines.length).toBeGreaterThanOrEqual(Number(seeded![1]));
    expect(lines.slice(0, Number(seeded![1])).every((line) => line.startsWith('{"mode":"test"'))).toBe(true);

    // The killed start made no key: this one is the first to, and shows the whole key.
    const headers = { 'x-api-key': running.trialKey! };
    const lanes = await fetch(`${running.base}/v1/lanes/400001/700001`, { headers });
    expect(lanes.status).toBe(200);
    const answer = await lanes.json() as { carriers: { carrier: string; sample_size: number; p50_transit_days: number | null }[] };
    const withFigures = answer.carriers.filter((c) => c.sample_size >= 30 && c.p50_transit_days !== null);
    // As after an uninterrupted first start (history.test.ts): every national carrier serves Mumbai → Kolkata.
    expect(withFigures.map((c) => c.carrier).sort()).toEqual(['bluedart', 'delhivery', 'dtdc', 'ekart', 'indiapost', 'shadowfax', 'shiprocket', 'speedpost', 'xpressbees']);
    expect(await stop(running)).toEqual({ code: 0, signal: null });
  });
});
