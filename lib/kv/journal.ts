import { closeSync, constants, existsSync, fsync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFile } from './files.ts';
import { GroupSync } from './group-sync.ts';

const SNAPSHOT = 'snapshot.json';
const journalName = (generation: number) => `journal-${generation}.ndjson`;
const JOURNAL_PATTERN = /^journal-\d+\.ndjson$/;
/**
 * The one journal of the stores written before this engine (push, payments, idempotency): no
 * generation, continuing a `snapshot.json` without one (push) or alone (payments, idempotency).
 */
const LEGACY_JOURNAL = 'journal.ndjson';
/**
 * A new journal: emptied if a compaction cut short left one, and appending, so a write after a
 * failed one cut back (ftruncate) lands at the new end, not past it.
 */
const NEW_JOURNAL = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND;

export interface JournalOptions<E> {
  /** Checks an entry read back (a zod schema's `parse`, say) and throws on one that is not. Default: taken as parsed. */
  parse?: (value: unknown) => E;
}

export interface OpenedJournal<E> {
  journal: Journal<E>;
  /** The state the last compaction wrote (a JSON object, with its `generation`), or null: nothing yet. */
  snapshot: Record<string, unknown> | null;
  /** Every entry appended since that snapshot, oldest first. */
  entries: E[];
}

/**
 * The embedded stores' one way of keeping state on disk, in a directory of their own:
 * `snapshot.json` (the whole state, generation g) and `journal-<g>.ndjson` (every change since, one
 * JSON line each). A store reads both at open, then calls `compact` (which starts an empty journal)
 * before its first `append`, again whenever the journal has grown enough, and usually at close.
 *
 * - Append: one write of whole lines before the caller lets the change take effect. `durable`
 *   entries are fsynced before `append` returns (they survive a power cut); the others are left to
 *   the OS, which keeps them through a crash of the process but not a power cut. Each store says
 *   which of its entries are durable. A write that fails is cut off again, so the journal never
 *   holds a half line followed by more.
 * - Commit: the same write, now, and a promise that resolves once an fsync covers it, shared with
 *   every other commit of the moment (group commit, group-sync.ts): the change takes effect at once
 *   (a store's check-and-write stays one synchronous step) and the caller answers only after the
 *   promise, so what was acknowledged survives a power cut at one fsync per batch.
 * - Read: a crash mid-write leaves a torn last line (no newline): it is dropped and the rest read.
 *   Damage anywhere else stops the open with the file and line, rather than guessing.
 * - Compaction writes snapshot g+1 (temp file, fsync, rename, directory fsync: the rename is the
 *   commit point), then deletes journal g. A crash before the rename leaves snapshot g and journal g;
 *   after it, snapshot g+1 and its journal: nothing is applied twice or lost.
 *
 * One process per directory. Files of the previous layout (`journal.ndjson`) are read once and
 * replaced at the first compaction.
 */
export class Journal<E> {
  private fd: number | null = null;
  /** Bytes of the current journal: where a failed write is cut back to. */
  private size = 0;
  private generation: number;
  private entriesSince = 0;
  private readonly dir: string;
  /** The file the running group fsync works on: kept open until it ends, even once replaced. */
  private syncingFd: number | null = null;
  private readonly group = new GroupSync((done) => this.syncCurrent(done));

  private constructor(dir: string, generation: number) {
    this.dir = dir;
    this.generation = generation;
  }

  /** Reads the snapshot and the journal that continues it. Call `compact` before appending. */
  static open<E>(dir: string, options: JournalOptions<E> = {}): OpenedJournal<E> {
    mkdirSync(dir, { recursive: true });
    const parse = options.parse ?? ((value: unknown) => value as E);
    const snapshot = readSnapshot(join(dir, SNAPSHOT));
    const generation = typeof snapshot?.generation === 'number' ? snapshot.generation : null;
    // A snapshot with a generation was written by this engine: a legacy journal beside it was
    // already compacted into it (its deletion was cut short) and is not read again.
    const journalPath = generation === null && existsSync(join(dir, LEGACY_JOURNAL)) ? join(dir, LEGACY_JOURNAL) : join(dir, journalName(generation ?? 0));
    return { journal: new Journal<E>(dir, generation ?? 0), snapshot, entries: readEntries(journalPath, parse) };
  }

  /** Entries appended since the last compaction. */
  get appended(): number {
    return this.entriesSince;
  }

  /** Bytes appended since the last compaction. */
  get appendedBytes(): number {
    return this.size;
  }

  /**
   * Writes `state(next generation)` as the new snapshot and starts an empty journal for it. Nothing
   * may be pending: the state must be what the journal holds, no more.
   */
  compact(state: (generation: number) => object): void {
    const next = this.generation + 1;
    const text = JSON.stringify({ ...state(next), generation: next });
    // No snapshot on disk is continued by journal `next` yet, so it can be made (empty) before the
    // snapshot is: the directory fsync of the snapshot's rename then makes both names durable.
    const fd = openSync(join(this.dir, journalName(next)), NEW_JOURNAL);
    try {
      replaceFile(join(this.dir, SNAPSHOT), text, true);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.retire();
    this.fd = fd;
    this.generation = next;
    this.size = 0;
    this.entriesSince = 0;
    // The snapshot was fsynced with everything committed so far: those writers need no other fsync.
    this.group.covered();
    // Older journals are inside the snapshot now; one left by a crash here is never read again.
    for (const name of readdirSync(this.dir)) {
      if ((JOURNAL_PATTERN.test(name) && name !== journalName(next)) || name === LEGACY_JOURNAL) rmSync(join(this.dir, name), { force: true });
    }
  }

  /**
   * Appends `entries` (one line each, in one write) before the caller applies them; fsynced first
   * when `durable`. Entries that must take effect together go in one entry: a crash mid-write may
   * keep the first lines of an append without the last.
   */
  append(entries: readonly E[], durable: boolean): void {
    if (this.fd === null) throw new Error(`${this.dir}: the journal is closed (or not started: compact first)`);
    // After a failed fsync the disk may not hold what was written: nothing more until a restart.
    const failure = this.group.failure;
    if (failure) throw new Error(`${this.dir}: an fsync of the journal failed (${failure.message}); restart the process`, { cause: failure });
    let text = '';
    for (const entry of entries) text += `${JSON.stringify(entry)}\n`;
    const bytes = Buffer.from(text, 'utf8');
    try {
      // writeSync may write less than asked (a full disk): the rest follows, or the whole is cut off.
      for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written);
      if (durable) fsyncSync(this.fd);
    } catch (err) {
      ftruncateSync(this.fd, this.size);
      throw err;
    }
    this.size += bytes.length;
    this.entriesSince += entries.length;
  }

  /**
   * Appends `entries` now, as `append` does (the caller applies them at once), and resolves once an
   * fsync covers them: one fsync for every commit made while the previous one ran (group-sync.ts).
   * Throws at once when the write fails (then nothing was written); rejects if the fsync fails.
   */
  commit(entries: readonly E[]): Promise<void> {
    this.append(entries, false);
    return this.group.request();
  }

  /** Resolves once everything appended so far is fsynced: for an answer that repeats a commit not yet durable. */
  flushed(): Promise<void> {
    return this.group.flushed();
  }

  /** Group fsyncs done (commit, flushed): tests check that the durable path is taken. */
  get syncs(): number {
    return this.group.syncs;
  }

  /** Closes the file, first fsyncing it so that the commits still waiting resolve. */
  close(): void {
    if (this.fd !== null) {
      fsyncSync(this.fd);
      this.group.covered();
    }
    this.retire();
    this.fd = null;
  }

  private syncCurrent(done: (err: Error | null) => void): void {
    const fd = this.fd;
    // Closed meanwhile: close() fsynced it and answered the waiting commits.
    if (fd === null) return done(null);
    this.syncingFd = fd;
    fsync(fd, (err) => {
      this.syncingFd = null;
      // Replaced (compaction) or closed while this ran: retire() left the closing to us.
      if (fd !== this.fd) closeSync(fd);
      done(err);
    });
  }

  /**
   * Lets go of the current file. One a group fsync works on is closed when it ends instead: closed
   * now, its number could be reused by a file opened meanwhile and that file fsynced in its place.
   */
  private retire(): void {
    if (this.fd !== null && this.fd !== this.syncingFd) closeSync(this.fd);
  }
}

function readSnapshot(path: string): Record<string, unknown> | null {
  if (!existsSync(path)) return null;
  // Replaced whole by rename, so never torn: damage is someone's edit, reported as such.
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path} is damaged: ${(err as Error).message}`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${path} is damaged: not a JSON object`);
  return value as Record<string, unknown>;
}

/** A torn last line (the process died mid-write) is dropped; damage anywhere else is an error. */
function readEntries<E>(path: string, parse: (value: unknown) => E): E[] {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n');
  // Complete lines end in a newline, so the last piece is empty or the torn line.
  lines.pop();
  return lines.map((line, i) => {
    try {
      return parse(JSON.parse(line));
    } catch (err) {
      throw new Error(`${path} line ${i + 1} is damaged: ${(err as Error).message}`, { cause: err });
    }
  });
}
