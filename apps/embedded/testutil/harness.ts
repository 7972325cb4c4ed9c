/**
 * Test support for the npm start tests (start.test.ts, start.services.test.ts): runs what `npm start`
 * runs (`node <heap policy> apps/embedded/main.ts`) as a real process, with none of the
 * project's environment variables set but a temp DATA_DIR and a free PORT.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { withoutProjectEnv } from '../../../lib/config/index.ts';
import { freePort } from '../../../lib/testutil/ports.ts';
import { UsageRecordSchema, type UsageRecord } from '../../../lib/schemas/index.ts';
import { COMPILE_CACHE_FLAGS } from '../../../lib/process/start-flags.ts';
import { HEAP_POLICY_FLAGS, withMallocPolicy } from '../../api/context/heap-policy.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Bounds on waiting, so a hang fails the test instead of stalling the run (not speed checks). */
const START_BOUND_MS = 90_000;
const EXIT_BOUND_MS = 30_000;

interface Running {
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Started extends Running {
  /** The curl line of the banner, as printed (without its indentation). */
  curlLine: string;
  /** The whole trial key, printed by the first start on a store only (later ones print its prefix). */
  trialKey: string | null;
  base: string;
}

const children: ChildProcess[] = [];

/** After a test file: ends what `start` left running (a test failed half-way), by its own pid, and removes the data dir. */
export async function cleanUp(dataDir: string | undefined): Promise<void> {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}

/** The environment of someone who just cloned the project: none of its variables set. */
function freshCloneEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  return { ...withoutProjectEnv(process.env), DATA_DIR: dataDir, PORT: String(port) };
}

/** `npm start` (what its script runs), until the banner's curl line is printed. */
export async function start(dataDir: string, services: NodeJS.ProcessEnv = {}): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, [...HEAP_POLICY_FLAGS, ...COMPILE_CACHE_FLAGS, 'apps/embedded/main.ts'], { cwd: REPO_ROOT, env: withMallocPolicy({ ...freshCloneEnv(dataDir, port), ...services }), stdio: ['ignore', 'pipe', 'pipe'] });
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
  const trialKey = /^\s*trial key:\s+(trk_test_[A-Za-z0-9]{32})\b/m.exec(output)?.[1] ?? null;
  if (trialKey) expect(curlLine).toContain(trialKey);
  else expect(output).toMatch(/^\s*trial key:\s+trk_test_[A-Za-z0-9]{7}… +\(made at the first start/m);
  const base = /listening on (http:\/\/\S+)/.exec(output)?.[1];
  expect(base, output).toBe(`http://127.0.0.1:${port}`);
  return { ...running, curlLine, trialKey, base: base! };
}

/** SIGTERM, then the exit (bounded). */
export async function stop(running: Running): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  running.child.kill('SIGTERM');
  let bound: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => { bound = setTimeout(() => resolve('timeout'), EXIT_BOUND_MS); });
  const result = await Promise.race([running.exited, timedOut]);
  clearTimeout(bound);
  if (result === 'timeout') throw new Error(`npm start did not exit within ${EXIT_BOUND_MS} ms of SIGTERM:\n${running.output()}`);
  return result;
}

/** Runs a command line in a shell, as a person pasting it would; resolves with its stdout. */
export function shell(line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', line], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${line}\nfailed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

export async function usage(base: string, key: string): Promise<UsageRecord> {
  const res = await fetch(`${base}/v1/usage`, { headers: { 'x-api-key': key } });
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  const parsed = UsageRecordSchema.safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  return parsed.data!;
}
