/**
 * The embedded default's checkpoint: its derived state (the shipment index, the lane book's
 * closures, the prediction book's observations and model) as of a byte offset of the raw-poll log,
 * so a start loads it and reads only the log's tail instead of replaying the whole history.
 *
 * One file, `DATA_DIR/checkpoint.bin`: a header (magic, format version, CRC-32 and length of the
 * body) and the body, `v8.serialize` of the state (typed arrays are copied as bytes, so it is
 * compact and loads without parsing). Written whole to `checkpoint.bin.tmp`, fsynced, renamed over
 * the old one and the directory fsynced: a crash leaves the old file or the new one, never a mix,
 * and a temp file left by a kill is never read. A start ignores a checkpoint that is damaged (CRC,
 * length, magic), of another format version, derived under other rules (`fingerprint`) or written
 * over another log (the log's first bytes and the bytes before the offset are hashed): it then
 * rebuilds from the whole log. Deleting the file only costs that longer start.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { open, readFile, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import { syncDir } from '../kv/files.ts';
import type { LaneBookState } from '../lanes/index.ts';
import type { PredictionBookState } from '../prediction/index.ts';
import type { ShipmentIndexState } from './shipment-index.ts';

/** Bumped whenever the body's shape or what is derived from a poll changes: an older file is rebuilt. */
export const CHECKPOINT_VERSION = 6;
const MAGIC = Buffer.from('TRKCKPT\n', 'latin1');
/** magic, version (u32), CRC-32 of the body (u32), body length (u64). */
const HEADER_BYTES = MAGIC.length + 4 + 4 + 8;
/** How many bytes of the log's start, and before the offset, the mark hashes. */
const MARK_BYTES = 4096;

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

export function encodeCheckpoint(state: CheckpointState): Buffer {
  const body = serialize(state);
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(CHECKPOINT_VERSION, MAGIC.length);
  header.writeUInt32LE(crc32(body), MAGIC.length + 4);
  header.writeBigUInt64LE(BigInt(body.length), MAGIC.length + 8);
  return Buffer.concat([header, body]);
}

/** The state in `bytes`, or why it cannot be trusted. */
export function decodeCheckpoint(bytes: Buffer): { state: CheckpointState } | { error: string } {
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { error: 'not a checkpoint (no header)' };
  const version = bytes.readUInt32LE(MAGIC.length);
  if (version !== CHECKPOINT_VERSION) return { error: `format version ${version}, this build reads ${CHECKPOINT_VERSION}` };
  const length = bytes.readBigUInt64LE(MAGIC.length + 8);
  const bodyLength = bytes.length - HEADER_BYTES;
  if (length !== BigInt(bodyLength)) return { error: `truncated or overlong (${bodyLength} body bytes, header says ${length})` };
  const body = bytes.subarray(HEADER_BYTES);
  if (crc32(body) !== bytes.readUInt32LE(MAGIC.length + 4)) return { error: 'checksum mismatch (damaged)' };
  try {
    return { state: deserialize(body) as CheckpointState };
  } catch (err) {
    return { error: `unreadable body: ${(err as Error).message}` };
  }
}

/**
 * Replaces the checkpoint with `bytes` (encodeCheckpoint): temp file, fsync, rename, directory fsync.
 * Never on the request path: it is called after a rebuild and at shutdown.
 */
export async function writeCheckpoint(dataDir: string, bytes: Buffer): Promise<void> {
  const temp = checkpointTempPath(dataDir);
  const file = await open(temp, 'w');
  try {
    for (let done = 0; done < bytes.length; ) done += (await file.write(bytes, done)).bytesWritten;
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, checkpointPath(dataDir));
  syncDir(dirname(checkpointPath(dataDir)));
}

export type CheckpointRead = { state: CheckpointState } | { missing: true } | { ignored: string };

/** The checkpoint as written, or why there is none to load; a temp file left by a kill mid-write is deleted. */
export async function readCheckpoint(dataDir: string): Promise<CheckpointRead> {
  rmSync(checkpointTempPath(dataDir), { force: true });
  const path = checkpointPath(dataDir);
  if (!existsSync(path)) return { missing: true };
  const decoded = decodeCheckpoint(await readFile(path));
  return 'error' in decoded ? { ignored: decoded.error } : decoded;
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
