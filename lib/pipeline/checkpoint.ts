/**
 * The embedded default's checkpoint: its derived state (the shipment index, the lane book's
 * closures, the prediction book's observations and model) as of a byte offset of the raw-poll log,
 * so a start loads it and reads only the log's tail instead of replaying the whole history.
 *
 * One file, `DATA_DIR/checkpoint.bin`: a header (magic, format version, CRC-32 and length of each
 * section) and two sections, `v8.serialize` of the state and of the prediction book's delivered
 * rows (typed arrays are copied as bytes, so it is compact and loads without parsing); the rows stay
 * in the file until a rebuild reads them (`readCheckpoint`). Written whole to `checkpoint.bin.tmp`, fsynced, renamed over
 * the old one and the directory fsynced: a crash leaves the old file or the new one, never a mix,
 * and a temp file left by a kill is never read. A start ignores a checkpoint that is damaged (CRC,
 * length, magic), of another format version, derived under other rules (`fingerprint`) or written
 * over another log (the log's first bytes and the bytes before the offset are hashed): it then
 * rebuilds from the whole log. Deleting the file only costs that longer start.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { open, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import { syncDir } from '../kv/files.ts';
import type { LaneBookState } from '../lanes/index.ts';
import type { DeliveredRowsState, PredictionBookState, StoredRows } from '../prediction/index.ts';
import type { ShipmentIndexState } from './shipment-index.ts';

/** Bumped whenever the body's shape or what is derived from a poll changes: an older file is rebuilt. */
export const CHECKPOINT_VERSION = 11;
const MAGIC = Buffer.from('TRKCKPT\n', 'latin1');
/** magic, version (u32), then per section (the state, the delivered rows) its CRC-32 (u32) and length (u64). */
const HEADER_BYTES = MAGIC.length + 4 + 2 * (4 + 8);
/** How many bytes of the log's start, and before the offset, the mark hashes. */
const MARK_BYTES = 4096;
/** The rows' section is checked in reads of this size (it is tens of MiB at a million polls). */
const CHECK_CHUNK_BYTES = 1 << 20;

export function checkpointPath(dataDir: string): string {
  return join(dataDir, 'checkpoint.bin');
}

/** Where a checkpoint is written until it is whole; one found at a start was cut short and is deleted. */
export function checkpointTempPath(dataDir: string): string {
  return `${checkpointPath(dataDir)}.tmp`;
}

/** What tells that the log under a checkpoint is the log it was written over, up to `offset`. */
export interface LogMark {
  offset: number;
  /** SHA-256 (hex) of the log's first min(offset, 4 KiB) bytes and of the 4 KiB (or fewer) before `offset`. */
  head: string;
  tail: string;
}

export interface CheckpointState {
  /** What the state was derived under (rules, places, calendar, window): another one is not loaded. */
  fingerprint: string;
  log: LogMark;
  writtenAtMs: number;
  index: ShipmentIndexState;
  lanes: LaneBookState;
  predictions: PredictionBookState;
}

/** A checkpoint to write: the prediction book's rows in columns (as its export gives them). */
export type CheckpointToWrite = CheckpointState & { predictions: { rows: DeliveredRowsState } };

/** One section of the file: where it starts, its length and CRC-32. */
interface Section { at: number; length: number; crc: number }

/**
 * The file: a header, then two sections, each `v8.serialize`d: the state without the prediction
 * book's delivered rows, then those rows. Apart because only a rebuild reads the rows: a start
 * checks them and leaves them in the file (`readCheckpoint`).
 */
export function encodeCheckpoint(state: CheckpointToWrite): Buffer {
  const { rows, ...predictions } = state.predictions;
  const main = serialize({ ...state, predictions });
  const stored = serialize(rows);
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  let at = header.writeUInt32LE(CHECKPOINT_VERSION, MAGIC.length);
  for (const section of [main, stored]) {
    at = header.writeUInt32LE(crc32(section), at);
    at = header.writeBigUInt64LE(BigInt(section.length), at);
  }
  return Buffer.concat([header, main, stored]);
}

/** The two sections named by a file's header, or why the file cannot be trusted. */
function sectionsOf(header: Buffer, fileBytes: number): { main: Section; rows: Section } | { error: string } {
  if (header.length < HEADER_BYTES || !header.subarray(0, MAGIC.length).equals(MAGIC)) return { error: 'not a checkpoint (no header)' };
  const version = header.readUInt32LE(MAGIC.length);
  if (version !== CHECKPOINT_VERSION) return { error: `format version ${version}, this build reads ${CHECKPOINT_VERSION}` };
  const sections: Section[] = [];
  let at = HEADER_BYTES;
  for (let s = 0, field = MAGIC.length + 4; s < 2; s++, field += 12) {
    const length = Number(header.readBigUInt64LE(field + 4));
    sections.push({ at, length, crc: header.readUInt32LE(field) });
    at += length;
  }
  const bodyBytes = fileBytes - HEADER_BYTES;
  if (at !== fileBytes) return { error: `truncated or overlong (${bodyBytes} body bytes, header says ${at - HEADER_BYTES})` };
  return { main: sections[0]!, rows: sections[1]! };
}

/** The state with the rows read, or why it cannot be trusted; the state section first, then the rows. */
function decodeSections(
  main: Buffer, sections: { main: Section; rows: Section }, rowsCrc: () => number, rowsOf: () => PredictionBookState['rows'],
): { state: CheckpointState } | { error: string } {
  if (crc32(main) !== sections.main.crc || rowsCrc() !== sections.rows.crc) return { error: 'checksum mismatch (damaged)' };
  try {
    const state = deserialize(main) as CheckpointState;
    state.predictions.rows = rowsOf();
    return { state };
  } catch (err) {
    return { error: `unreadable body: ${(err as Error).message}` };
  }
}

/** The state in `bytes` (the whole file, its rows read too), or why it cannot be trusted. */
export function decodeCheckpoint(bytes: Buffer): { state: CheckpointState } | { error: string } {
  const sections = sectionsOf(bytes.subarray(0, HEADER_BYTES), bytes.length);
  if ('error' in sections) return sections;
  const part = (s: Section) => bytes.subarray(s.at, s.at + s.length);
  return decodeSections(part(sections.main), sections, () => crc32(part(sections.rows)), () => deserialize(part(sections.rows)) as DeliveredRowsState);
}

/** `length` bytes at `at` of the open file `fd`. */
function readExactly(fd: number, at: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  for (let done = 0; done < length; ) {
    const got = readSync(fd, buffer, done, length - done, at + done);
    if (got === 0) throw new Error(`the checkpoint ended at byte ${at + done}, expected ${at + length}`);
    done += got;
  }
  return buffer;
}

function crcOfSection(fd: number, section: Section): number {
  let crc = 0;
  for (let at = 0; at < section.length; at += CHECK_CHUNK_BYTES) {
    crc = crc32(readExactly(fd, section.at + at, Math.min(CHECK_CHUNK_BYTES, section.length - at)), crc);
  }
  return crc;
}

/**
 * The rows' section of the open checkpoint `fd`, read back when the prediction book asks (each read
 * checked again). The descriptor keeps the file's contents readable after a newer checkpoint is
 * renamed over it; it is closed when the book lets the rows go.
 */
function storedRowsOf(fd: number, section: Section): StoredRows {
  let open = true;
  return {
    read() {
      if (!open) throw new Error('the stored prediction rows were let go');
      const bytes = readExactly(fd, section.at, section.length);
      if (crc32(bytes) !== section.crc) throw new Error('the checkpoint\'s stored prediction rows changed on disk (checksum mismatch)');
      return deserialize(bytes) as DeliveredRowsState;
    },
    release() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/**
 * Replaces the checkpoint with `bytes` (encodeCheckpoint): temp file, fsync, rename, directory fsync.
 * Never on the request path: it is called after a rebuild and at shutdown. Returns the prediction
 * rows it holds, readable from the file written (the caller releases them).
 */
export async function writeCheckpoint(dataDir: string, bytes: Buffer): Promise<StoredRows> {
  const temp = checkpointTempPath(dataDir);
  const file = await open(temp, 'w');
  try {
    for (let done = 0; done < bytes.length; ) done += (await file.write(bytes, done)).bytesWritten;
    await file.sync();
  } finally {
    await file.close();
  }
  const sections = sectionsOf(bytes.subarray(0, HEADER_BYTES), bytes.length);
  if ('error' in sections) throw new Error(`not a checkpoint to write: ${sections.error}`);
  // Opened before the rename: the descriptor is this file's whatever is renamed later.
  const fd = openSync(temp, 'r');
  try {
    await rename(temp, checkpointPath(dataDir));
    syncDir(dirname(checkpointPath(dataDir)));
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return storedRowsOf(fd, sections.rows);
}

export type CheckpointRead = { state: CheckpointState } | { missing: true } | { ignored: string };

/**
 * The checkpoint as written, or why there is none to load; a temp file left by a kill mid-write is
 * deleted. Both sections are checked, but the prediction book's rows are left in the file
 * (`StoredRows`, read back at its next rebuild): the caller releases them when it does not load them.
 */
export async function readCheckpoint(dataDir: string): Promise<CheckpointRead> {
  rmSync(checkpointTempPath(dataDir), { force: true });
  const path = checkpointPath(dataDir);
  if (!existsSync(path)) return { missing: true };
  const fd = openSync(path, 'r');
  let kept = false;
  try {
    const size = fstatSync(fd).size;
    const sections = sectionsOf(readExactly(fd, 0, Math.min(size, HEADER_BYTES)), size);
    if ('error' in sections) return { ignored: sections.error };
    const main = readExactly(fd, sections.main.at, sections.main.length);
    const decoded = decodeSections(main, sections, () => crcOfSection(fd, sections.rows), () => storedRowsOf(fd, sections.rows));
    if ('error' in decoded) return { ignored: decoded.error };
    kept = true;
    return decoded;
  } finally {
    if (!kept) closeSync(fd);
  }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The mark of `logPath` up to `offset` (offset bytes must be there). */
export async function markOfLog(logPath: string, offset: number): Promise<LogMark> {
  if (offset === 0) return { offset, head: sha256(new Uint8Array(0)), tail: sha256(new Uint8Array(0)) };
  const file = await open(logPath, 'r');
  try {
    const read = async (from: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, from);
      if (bytesRead !== length) throw new Error(`${logPath}: ${bytesRead} bytes at ${from}, expected ${length}`);
      return buffer;
    };
    const head = await read(0, Math.min(offset, MARK_BYTES));
    const tailFrom = Math.max(0, offset - MARK_BYTES);
    const tail = await read(tailFrom, offset - tailFrom);
    return { offset, head: sha256(head), tail: sha256(tail) };
  } finally {
    await file.close();
  }
}

/** Null when `logPath` still holds what `mark` saw, else what differs. */
export async function logMismatch(logPath: string, mark: LogMark): Promise<string | null> {
  const size = await stat(logPath).then((s) => s.size, () => 0);
  if (size < mark.offset) return `the raw-poll log is shorter (${size} bytes) than the checkpoint covers (${mark.offset})`;
  const now = await markOfLog(logPath, mark.offset);
  if (now.head !== mark.head) return 'the raw-poll log was replaced (its first bytes differ)';
  if (now.tail !== mark.tail) return `the raw-poll log differs before byte ${mark.offset}`;
  return null;
}

/** What derived state depends on besides the log: the mapping rules, the places and calendar files, the window. */
export function fingerprintOf(parts: readonly string[], files: readonly string[]): string {
  const hash = createHash('sha256').update(`v${CHECKPOINT_VERSION}\n`);
  for (const part of parts) hash.update(`${part}\n`);
  for (const file of files) hash.update(existsSync(file) ? readFileSync(file) : Buffer.from(`absent ${file}`)).update('\n');
  return hash.digest('hex');
}
