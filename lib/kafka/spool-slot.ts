import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

/**
 * A spool directory owned by exactly one bus at a time. Processes sharing a DATA_DIR (the API and a
 * poller started on their own, a history CLI beside a running API) each get a slot of their own
 * (`<base>/0`, `<base>/1`, …): the lowest one no live process holds. A slot whose owner died is
 * free again, and its leftover polls are drained by whoever claims it next.
 *
 * The lock is a Unix socket in Linux's abstract namespace, named after the slot's path: binding it
 * is atomic and the kernel releases it when the process dies, however it dies, so there is no stale
 * lock file to judge and no race between two processes taking over the same dead owner's slot.
 * Elsewhere (macOS) a pid file stands in, with the usual small race on a stale file.
 */
export interface SpoolSlot {
  /** The slot's directory (segments, the spool id, the local position). */
  dir: string;
  /** Stable for the slot's life: the Kafka transactional id and progress group are made of it. */
  id: string;
  release(): Promise<void>;
}

/** The slots under `base`, in number order (directories named by a number). */
export function slotNumbers(base: string): number[] {
  if (!existsSync(base)) return [];
  return readdirSync(base).filter((name) => /^\d+$/.test(name)).map(Number).sort((a, b) => a - b);
}

/** The lowest slot of `base` that no live process holds, claimed for this process. */
export async function claimFreeSlot(base: string): Promise<SpoolSlot> {
  for (let n = 0; ; n++) {
    const slot = await claimSlot(join(base, String(n)));
    if (slot) return slot;
  }
}

/** Claims the slot at `dir` (creating it), or null when a live process holds it. */
export async function claimSlot(dir: string): Promise<SpoolSlot | null> {
  mkdirSync(dir, { recursive: true });
  const release = process.platform === 'linux' ? await bindAbstractLock(dir) : pidFileLock(dir);
  if (!release) return null;
  const idFile = join(dir, 'id');
  if (!existsSync(idFile)) writeFileSync(idFile, randomUUID());
  return { dir, id: readFileSync(idFile, 'utf8').trim(), release };
}

function bindAbstractLock(dir: string): Promise<(() => Promise<void>) | null> {
  const name = `\0trk-spool-${createHash('sha256').update(realpathSync(dir)).digest('hex').slice(0, 40)}`;
  return new Promise((resolve, reject) => {
    const server: Server = createServer((socket) => socket.destroy());
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(null) : reject(err)));
    server.listen({ path: name }, () => {
      server.unref(); // a held lock must not keep the process alive
      resolve(() => new Promise<void>((done) => server.close(() => done())));
    });
  });
}

function pidFileLock(dir: string): (() => Promise<void>) | null {
  const file = join(dir, 'owner.pid');
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return async () => { rmSync(file, { force: true }); };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileSync(file, 'utf8').trim());
    if (holder === process.pid || (holder > 0 && alive(holder))) return null;
    rmSync(file, { force: true }); // its owner died
  }
  return null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
