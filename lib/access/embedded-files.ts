import {
  closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync,
  rmSync, writeFileSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { JournalEntrySchema, SnapshotSchema, type JournalEntry, type Snapshot } from './embedded-state.ts';

const SNAPSHOT = 'snapshot.json';
const journalName = (generation: number) => `journal-${generation}.ndjson`;
const JOURNAL_PATTERN = /^journal-(\d+)\.ndjson$/;

/**
 * The embedded store's files: `snapshot.json` (the whole state, generation g) plus
 * `journal-<g>.ndjson` (every change since, one JSON line each, appended synchronously).
 *
 * Compaction writes the state as generation g+1 (temp file, fsync, rename: the rename is the commit
 * point), then deletes journal g. A crash before the rename leaves snapshot g + journal g; after it,
 * snapshot g+1 and a journal that has not started yet. Either way nothing is counted twice or lost.
 */
export class AccessFiles {
  private fd: number | null = null;
  private size = 0;
  private generation = 0;
  /** Entries appended since the last compaction. */
  appended = 0;

  private readonly dir: string;
  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Reads the snapshot and the journal that continues it. Call `compact` before appending. */
  static open(dir: string): { files: AccessFiles; snapshot: Snapshot | null; entries: JournalEntry[] } {
    mkdirSync(dir, { recursive: true });
    const files = new AccessFiles(dir);
    const snapshotPath = join(dir, SNAPSHOT);
    const snapshot = existsSync(snapshotPath)
      ? SnapshotSchema.parse(JSON.parse(readFileSync(snapshotPath, 'utf8')))
      : null;
    files.generation = snapshot?.generation ?? 0;
    const journalPath = join(dir, journalName(files.generation));
    const entries = existsSync(journalPath) ? parseJournal(readFileSync(journalPath, 'utf8'), journalPath) : [];
    return { files, snapshot, entries };
  }

  /** Writes `build(next generation)` as the new snapshot and starts an empty journal for it. */
  compact(build: (generation: number) => Snapshot): void {
    const next = this.generation + 1;
    const snapshotPath = join(this.dir, SNAPSHOT);
    const temp = `${snapshotPath}.tmp`;
    const tempFd = openSync(temp, 'w');
    try {
      writeFileSync(tempFd, JSON.stringify(build(next)));
      fsyncSync(tempFd);
    } finally {
      closeSync(tempFd);
    }
    renameSync(temp, snapshotPath);
    syncDir(this.dir);
    this.closeJournal();
    this.generation = next;
    for (const name of readdirSync(this.dir)) {
      const match = JOURNAL_PATTERN.exec(name);
      if (match && Number(match[1]) !== next) rmSync(join(this.dir, name), { force: true });
    }
    this.fd = openSync(join(this.dir, journalName(next)), 'a');
    this.size = 0;
    this.appended = 0;
  }

  /**
   * Appends entries (one write) before the caller applies them. If any is `durable` (a key change),
   * the journal is fsynced; counts alone are left to the OS, which keeps them through a process
   * crash but not a power cut. A failed write is cut off again, so the journal never holds a half
   * line followed by more.
   */
  append(entries: readonly JournalEntry[], durable: boolean): void {
    if (this.fd === null) throw new Error('access store files are closed');
    let text = '';
    for (const entry of entries) text += `${JSON.stringify(entry)}\n`;
    const bytes = Buffer.from(text, 'utf8');
    try {
      writeSync(this.fd, bytes);
      if (durable) fsyncSync(this.fd);
    } catch (err) {
      ftruncateSync(this.fd, this.size);
      throw err;
    }
    this.size += bytes.length;
    this.appended += entries.length;
  }

  close(): void {
    this.closeJournal();
  }

  private closeJournal(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** A torn last line (the process died mid-write) is dropped; damage anywhere else is an error. */
function parseJournal(text: string, path: string): JournalEntry[] {
  const lines = text.split('\n');
  // Complete lines end in a newline, so the last piece is empty or the torn line.
  lines.pop();
  const entries = lines.map((line, i) => {
    try {
      return JournalEntrySchema.parse(JSON.parse(line));
    } catch (err) {
      throw new Error(`${path} line ${i + 1} is damaged: ${(err as Error).message}`, { cause: err });
    }
  });
  return entries;
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
