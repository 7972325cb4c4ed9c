/**
 * Our service processes: started with their output in a log file, found again through pidfiles,
 * stopped with SIGTERM (SIGKILL as a last resort), and, when a start fails, explained by the tail
 * of what it logged.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processExists } from './state.ts';

const STOP_TIMEOUT_MS = 60_000;

export function readPid(pidfile: string): number | null {
  try {
    return Number(readFileSync(pidfile, 'utf8').replace(/\D/g, '')) || null;
  } catch {
    return null;
  }
}

/**
 * True when the pidfile names a live process whose command line contains `pattern`: the pattern
 * guards against a stale pidfile whose pid now belongs to something else.
 */
export function alive(pidfile: string, pattern: string): boolean {
  const pid = readPid(pidfile);
  if (pid !== null && commandMatches(pid, pattern)) return true;
  // A pidfile removed by a failed second start (ClickHouse deletes it on the way out) while ours
  // runs on: find it by its command line and write the pidfile again. Only a pattern naming our
  // own files (a path under .services) can tell ours from another's: 'redis-server' alone matched
  // the machine's own Redis on a fresh clone, and the pidfile was written into a folder not made yet.
  if (!pattern.includes('/') || !existsSync(dirname(pidfile))) return false;
  const found = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).find((other) => commandMatches(other, pattern));
  if (found === undefined) return false;
  writeFileSync(pidfile, `${found}\n`);
  return true;
}

function commandMatches(pid: number, pattern: string): boolean {
  try {
    return withRealPaths(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')).includes(withRealPaths(pattern));
  } catch {
    return false;
  }
}

/**
 * Absolute paths in `text` resolved through symlinks: worktrees share one .services through a
 * link each (/work/wt/<name>/.services → one folder), so a service started from one of them names
 * its files by that worktree's path; compared as written, every other worktree took it for stopped
 * and started a second one over the same files.
 */
function withRealPaths(text: string): string {
  return text.replace(/\/[^\s=]+/g, (path) => {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  });
}

/** Polls `check` every `everyMs` until it holds (true) or `timeoutMs` passes or `abort` holds (false). */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 500, abort?: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return true;
    if (Date.now() > deadline || abort?.()) return false;
    await sleep(everyMs);
  }
}

/** A signal to a process that may have exited meanwhile. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** SIGTERM, a wait for a clean shutdown, SIGKILL as a last resort; the pidfile goes either way. */
export async function stopPid(name: string, pidfile: string, pattern: string, log: (line: string) => void): Promise<void> {
  const pid = readPid(pidfile);
  if (pid === null || !alive(pidfile, pattern)) {
    rmSync(pidfile, { force: true });
    log(`${name}: not running`);
    return;
  }
  signal(pid, 'SIGTERM');
  if (!(await waitUntil(() => !processExists(pid), STOP_TIMEOUT_MS, 200))) {
    log(`${name} (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s; sending SIGKILL`);
    signal(pid, 'SIGKILL');
    await waitUntil(() => !processExists(pid), 5_000, 100);
  }
  rmSync(pidfile, { force: true });
  log(`${name}: stopped`);
}

export function logSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** What `file` got after byte `offset` (at most its last `maxBytes`): what the current start wrote. */
export function logSince(file: string, offset = 0, maxBytes = 65_536): string {
  const size = logSize(file);
  if (size <= offset) return '';
  const from = Math.max(offset, size - maxBytes);
  const buffer = Buffer.alloc(size - from);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, from);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** An Error whose message ends with the last 40 lines each log got during this start. */
export function startFailure(message: string, logs: [file: string, offset: number][]): Error {
  const tails = logs.flatMap(([file, offset]) => {
    const lines = logSince(file, offset).trimEnd().split('\n').slice(-40);
    return lines.join('') === '' ? [] : [`----- last lines of ${file} (this start) -----`, ...lines];
  });
  return new Error([message, ...tails].join('\n'));
}

/**
 * Runs a command that daemonizes itself (redis-server --daemonize, clickhouse-server --daemon)
 * with its output appended to `logFile`, and resolves with its exit status once it has forked.
 */
export async function runDaemonizing(command: string, args: string[], logFile: string, cwd?: string): Promise<number> {
  const out = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, { cwd, stdio: ['ignore', out, out] });
    return await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    });
  } finally {
    closeSync(out);
  }
}

/**
 * Starts a long-running process that must outlive us (and the test run or shell that asked for it):
 * its own session (no terminal's signals reach it), its output in `logFile`, nothing of ours held.
 */
export function spawnDetached(command: string, args: string[], logFile: string): number {
  const out = openSync(logFile, 'w');
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', out, out] });
    // A failed spawn (no such command) has no pid and reports it as an 'error' event as well.
    child.once('error', () => undefined);
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${command} (is it installed?)`);
    return child.pid;
  } finally {
    closeSync(out);
  }
}
