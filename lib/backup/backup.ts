/**
 * `cli backup <dir>`: a consistent copy of the embedded store's DATA_DIR taken while the service
 * runs, which a stopped service can start from (replace DATA_DIR with it).
 *
 * Why a copy of the files is enough, part by part:
 * - A journal store (access, payments, idempotency, push and any other directory holding a
 *   `snapshot.json`, lib/kv/journal.ts) is its snapshot (replaced whole by rename: read whole or
 *   not at all) plus the journal of the snapshot's generation cut after its last complete line: the
 *   state at some moment of the copy. A compaction in between deletes that journal (the name is
 *   never used again): the copy sees it missing and starts the store over.
 * - Files replaced whole by rename or written once (the throttle's attempts, the applied mapping,
 *   the admin token, `moved.json`) are copied as they are.
 * - The raw-poll log is appended to only: it is cut after its last complete line.
 *
 * Each store is consistent on its own, not with the others at one instant, so they are copied in
 * an order where a later copy only adds to an earlier one's story: payments first, then the keys
 * last. A payment copied as claimed whose key's renewal is in the (later) keys copy is claimed
 * again by the gateway's redelivery and found already applied (lib/billing/settle.ts); a webhook
 * endpoint or watch always finds its key. Left out, said in the summary: the tracking cache's
 * delivered records (`records/`: refilled by lookups), the mail outbox (sent mail), the Kafka
 * spool (`spool/`: polls on their way to Kafka, whose position Kafka holds: it belongs to the
 * distributed start, not to a restored embedded one) and anything else unknown.
 */
import {
  closeSync, constants, copyFileSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { replaceFile } from '../kv/index.ts';

/** Journal stores copied before the others (see the file's comment), and the one copied last. */
const FIRST = ['payments', 'idempotency', 'push'];
const LAST = 'access';
/** Replaced whole or written once: copied as they are. */
// contact-key: without it the customers' contacts sealed in push/ cannot be read after a restore.
const WHOLE_FILES = ['throttle/attempts.json', 'replay/applied-mapping.json', 'admin-token', 'moved.json', 'contact-key'];
/** Appended to only: copied up to the last complete line. */
const LOGS = ['polls.ndjson'];
/** Known and left out on purpose (the file's comment says why). */
const LEFT_OUT = ['records', 'outbox', 'spool'];
/** Compactions in a row that may restart one store's copy before the copy gives up. */
const ATTEMPTS = 20;

export interface BackupSummary {
  /** Each file written, relative to the backup directory, with its size. */
  files: { path: string; bytes: number }[];
  /** Entries of DATA_DIR not copied: known ones (why in docs/operators/backup.md) and unknown ones. */
  left_out: string[];
}

export function backupDataDir(dataDir: string, target: string): BackupSummary {
  const from = resolve(dataDir);
  const to = resolve(target);
  if (!existsSync(from)) throw new Error(`DATA_DIR ${dataDir} does not exist`);
  const inside = relative(from, to);
  const isInside = inside === '' || (!inside.startsWith('..') && !inside.startsWith('/'));
  if (isInside) throw new Error(`the backup directory ${target} must be outside DATA_DIR ${dataDir}`);
  if (existsSync(to) && readdirSync(to).length > 0) throw new Error(`the backup directory ${target} is not empty`);
  mkdirSync(to, { recursive: true });

  const summary: BackupSummary = { files: [], left_out: [] };
  const written = (path: string) => summary.files.push({ path: relative(to, path), bytes: statSync(path).size });
  const entries = readdirSync(from, { withFileTypes: true });
  const stores = entries.filter((e) => e.isDirectory() && existsSync(join(from, e.name, 'snapshot.json'))).map((e) => e.name);
  const ordered = [
    ...FIRST.filter((name) => stores.includes(name)),
    ...stores.filter((name) => !FIRST.includes(name) && name !== LAST).sort(),
    ...(stores.includes(LAST) ? [LAST] : []),
  ];
  for (const name of ordered) for (const path of copyJournalStore(join(from, name), join(to, name))) written(path);
  for (const file of WHOLE_FILES) {
    if (!existsSync(join(from, file))) continue;
    mkdirSync(join(to, file, '..'), { recursive: true });
    copyFileSync(join(from, file), join(to, file));
    syncFile(join(to, file));
    written(join(to, file));
  }
  for (const file of LOGS) {
    if (!existsSync(join(from, file))) continue;
    copyWholeLines(join(from, file), join(to, file));
    written(join(to, file));
  }
  const copied = new Set([...ordered, ...WHOLE_FILES.map((f) => f.split('/')[0]!), ...LOGS]);
  summary.left_out = entries.map((e) => e.name)
    .filter((name) => !copied.has(name) && !name.endsWith('.tmp'))
    .sort()
    .map((name) => (LEFT_OUT.includes(name) ? name : `${name} (unknown)`));
  return summary;
}

/**
 * Copies one journal store: its snapshot and the journal continuing it, cut at the last complete
 * line. Returns the files written.
 */
function copyJournalStore(from: string, to: string): string[] {
  mkdirSync(to, { recursive: true });
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const snapshot = readFileSync(join(from, 'snapshot.json'), 'utf8');
    const generation = (JSON.parse(snapshot) as { generation?: unknown }).generation;
    // No generation: a store of the previous layout no process has opened since (journal.ndjson).
    const journal = typeof generation === 'number' ? `journal-${generation}.ndjson` : 'journal.ndjson';
    try {
      copyWholeLines(join(from, journal), join(to, journal));
    } catch (err) {
      // A compaction replaced the snapshot and deleted this journal meanwhile: take the new pair.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && typeof generation === 'number') continue;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return writeSnapshot(to, snapshot);
      throw err;
    }
    return [...writeSnapshot(to, snapshot), join(to, journal)];
  }
  throw new Error(`${from} was compacted ${ATTEMPTS} times while it was being copied; try again`);
}

function writeSnapshot(to: string, text: string): string[] {
  replaceFile(join(to, 'snapshot.json'), text, true);
  return [join(to, 'snapshot.json')];
}

/**
 * Copies `from` to `to` and cuts the copy after its last newline: a line being appended while it
 * was copied is left out whole (a reader would drop it as torn anyway). Throws ENOENT when `from`
 * does not exist.
 */
export function copyWholeLines(from: string, to: string): void {
  copyFileSync(from, to);
  const fd = openSync(to, constants.O_RDWR);
  try {
    ftruncateSync(fd, endOfLastLine(fd));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The size up to and including the last newline (0 when there is none). */
function endOfLastLine(fd: number): number {
  const chunk = Buffer.alloc(64 * 1024);
  for (let end = fstatSync(fd).size; end > 0; ) {
    const start = Math.max(0, end - chunk.length);
    const read = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, read).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
