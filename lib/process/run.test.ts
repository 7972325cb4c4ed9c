/**
 * The shared process runner (run.ts) in real child processes: SIGTERM/SIGINT → the app's stop →
 * exit 0; a stop that fails or outlives the deadline → exit 1 with a line naming the app and what
 * happened (the step it hung at); a start that fails → exit 1 with the reason. The child is a stand-in app
 * (testutil/stand-in-app.ts) whose stop behaves as told.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

interface Outcome { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Starts the stand-in, sends `signal` once it is ready (unless its start fails), and waits for its exit. */
function run(options: object, signal: NodeJS.Signals | null = 'SIGTERM'): Promise<Outcome> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'testutil/stand-in-app.ts'), JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (signal && /^ready$/m.test(stdout)) { child.kill(signal); signal = null; }
  });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  return new Promise((resolve) => child.once('close', (code, sig) => resolve({ code, signal: sig, stdout, stderr })));
}

it('SIGTERM: the stop runs, then the last step, and the process exits 0', async () => {
  const out = await run({ stop: 'ok', deadlineMs: 20_000 });
  expect(out, out.stderr).toMatchObject({ code: 0, signal: null });
  expect(out.stdout).toBe('ready\nfinally\n');
  expect(out.stderr).toBe('');
});

it('SIGINT stops the same way', async () => {
  const out = await run({ stop: 'ok', deadlineMs: 20_000 }, 'SIGINT');
  expect(out, out.stderr).toMatchObject({ code: 0, signal: null });
});

it('a stop that fails: exit 1, the app and the error named', async () => {
  const out = await run({ stop: 'fails', deadlineMs: 20_000 });
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('stand-in: SIGTERM: the stop failed');
  expect(out.stderr).toContain('the writer could not flush');
  expect(out.stdout).toBe('ready\nfinally\n');
});

it('a stop that hangs while holding the process alive: exit 1 after the deadline, saying what hung', async () => {
  const out = await run({ stop: 'hangs', deadlineMs: 300 });
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('stand-in: SIGTERM: the stop did not finish within 300 ms (hung at: the writer (last flush)); exiting anyway');
});

it('a stop that hangs on a promise nothing will settle, with nothing else alive: still exit 1, not a silent 0', async () => {
  const out = await run({ stop: 'hangs-idle', deadlineMs: 300 });
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('stand-in: SIGTERM: the stop did not finish within 300 ms (hung at: the writer (last flush)); exiting anyway');
});

it('a start that fails: exit 1 with the reason, the last step still runs', async () => {
  const out = await run({ stop: 'ok', deadlineMs: 20_000, startFails: true }, null);
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('the stand-in could not start');
  expect(out.stdout).toBe('finally\n');
});
