/**
 * The first start's history (seed.ts) is written whole or not at all: a seed killed part way
 * (SIGKILL of a real process) leaves no log, and the next start's seed writes the same history an
 * uninterrupted one does; a log that holds lines is never seeded over.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pollLogPath } from '../store/poll-log.ts';
import { isFirstStart, seedEmbeddedHistory, seedingPath } from './seed.ts';

const CHILD = fileURLToPath(new URL('./testutil/seed-child.ts', import.meta.url));
/** A fixed end, so two seeds of the same options write the same bytes. */
const NOW = Date.parse('2026-06-01T00:00:00+05:30');
/** Enough journeys that the seed writes its temporary file in many chunks (about 15). */
const SHIPMENTS = 10_000;

let dir: string;
const dirs: string[] = [];
const newDir = (name: string) => {
  const made = mkdtempSync(join(tmpdir(), `seed-${name}-`));
  dirs.push(made);
  return made;
};
beforeEach(() => { dir = newDir('data'); });
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

/** Runs the seed in a child process and SIGKILLs it once its temporary file holds `bytes` or more. */
async function seedKilledPartWay(dataDir: string, bytes: number): Promise<void> {
  const child = spawn(process.execPath, [CHILD, dataDir, String(SHIPMENTS), String(NOW)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  let ended = false;
  void exited.then(() => { ended = true; });
  const temp = seedingPath(dataDir);
  while (!ended && !(existsSync(temp) && statSync(temp).size >= bytes)) await new Promise((resolve) => setTimeout(resolve, 5));
  child.kill('SIGKILL');
  // A seed that finished before the kill proves nothing: the test says so instead of passing.
  expect(await exited, `the seed ended before it was killed:\n${output}`).toBe('SIGKILL');
}

describe('seedEmbeddedHistory', () => {
  it('a seed killed part way leaves no log; the next seed writes the whole history, as an uninterrupted seed does', { timeout: 120_000 }, async () => {
    await seedKilledPartWay(dir, 1024 * 1024);
    // Nothing a start would read: the log is absent, so the next start is still a first start.
    expect(existsSync(pollLogPath(dir))).toBe(false);
    expect(statSync(seedingPath(dir)).size).toBeGreaterThanOrEqual(1024 * 1024);
    expect(isFirstStart(dir)).toBe(true);

    const redone = await seedEmbeddedHistory(dir, { shipments: SHIPMENTS, days: 90, now: NOW });
    expect(redone).toMatchObject({ journeys: SHIPMENTS, redone: true });
    expect(existsSync(seedingPath(dir))).toBe(false);

    const fresh = newDir('fresh');
    const whole = await seedEmbeddedHistory(fresh, { shipments: SHIPMENTS, days: 90, now: NOW });
    expect(whole).toEqual({ journeys: SHIPMENTS, polls: redone.polls, redone: false });
    const lines = readFileSync(pollLogPath(dir), 'utf8');
    expect(lines.split('\n').length - 1).toBe(whole.polls);
    // The same seed and end: the same history, byte for byte.
    expect(lines === readFileSync(pollLogPath(fresh), 'utf8')).toBe(true);
  });

  it('an empty log is a first start: seeded', async () => {
    writeFileSync(pollLogPath(dir), '');
    const seeded = await seedEmbeddedHistory(dir, { shipments: 300, days: 90, now: NOW });
    expect(seeded.polls).toBeGreaterThan(0);
    expect(readFileSync(pollLogPath(dir), 'utf8').split('\n').length - 1).toBe(seeded.polls);
  });

  it('a log with lines is never seeded over; a seed cut short beside it is removed', async () => {
    const live = '{"mode":"live","poll":{}}\n';
    appendFileSync(pollLogPath(dir), live);
    writeFileSync(seedingPath(dir), '{"mode":"test","poll":{}}\n{"mode":"te');
    expect(await seedEmbeddedHistory(dir, { shipments: 300, days: 90, now: NOW })).toEqual({ journeys: 0, polls: 0, redone: false });
    expect(readFileSync(pollLogPath(dir), 'utf8')).toBe(live);
    expect(existsSync(seedingPath(dir))).toBe(false);
  });

  it('no history asked (0 shipments): no log, and a seed cut short is removed', async () => {
    writeFileSync(seedingPath(dir), '{"mode":"te');
    expect(await seedEmbeddedHistory(dir, { shipments: 0, days: 90, now: NOW })).toEqual({ journeys: 0, polls: 0, redone: false });
    expect(existsSync(pollLogPath(dir))).toBe(false);
    expect(existsSync(seedingPath(dir))).toBe(false);
  });
});
