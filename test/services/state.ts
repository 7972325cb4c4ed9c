/**
 * Where our services keep everything (configs, data, logs, pidfiles, the Kafka jars): <repo>/.services,
 * git-ignored, one per checkout. And the lock that serialises starts and stops between processes
 * (two engineers' runs, a test run and `npm run services`), so none starts a second copy.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const REPO_ROOT = join(import.meta.dirname, '../..');
export const STATE_DIR = join(REPO_ROOT, '.services');

const LOCK = join(STATE_DIR, 'lock');
const LOCK_WAIT_MS = 15 * 60_000;

/** True when a process with this pid exists (EPERM: it does, but is not ours to signal). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in the lock file; 0 while its holder has created it but not written it yet. */
function lockHolder(): number | null {
  try {
    return Number(readFileSync(LOCK, 'utf8').trim()) || 0;
  } catch {
    return null; // released meanwhile
  }
}

/** A lock left by a process that died holding it (killed, crashed): no live holder. */
function stale(holder: number): boolean {
  if (holder > 0) return !processExists(holder);
  try {
    return Date.now() - statSync(LOCK).mtimeMs > 10_000; // created but never written
  } catch {
    return false;
  }
}

async function locked<T>(fn: () => Promise<T>): Promise<T> {
  mkdirSync(STATE_DIR, { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = lockHolder();
    if (holder === null) continue;
    if (stale(holder)) {
      rmSync(LOCK, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`services: process ${holder} has held ${LOCK} for more than 15 minutes`);
    await sleep(200);
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

// Within one process, callers queue here first: the file lock alone would see its own pid and wait.
let queue: Promise<unknown> = Promise.resolve();

/** Runs `fn` holding the services lock. Never nest it: a nested call would wait for itself. */
export function withLock<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(() => locked(fn));
  queue = run.catch(() => undefined);
  return run;
}
