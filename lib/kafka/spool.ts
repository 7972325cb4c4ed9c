import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceFile } from '../kv/files.ts';

/** Where the next unsent line starts: a segment's number and a byte offset in it. */
export interface SpoolPosition {
  segment: number;
  byte: number;
}

export const SPOOL_START: SpoolPosition = { segment: 1, byte: 0 };

const SEGMENT_BYTES = 4 * 1024 * 1024;
const BYTE_BITS = 32n;

/** One Kafka offset carries a position (the progress group's committed offset, see KafkaBus). */
export function packPosition(p: SpoolPosition): string {
  return ((BigInt(p.segment) << BYTE_BITS) + BigInt(p.byte)).toString();
}

export function unpackPosition(offset: string): SpoolPosition | null {
  const n = BigInt(offset);
  if (n < 0n) return null; // -1: nothing committed yet
  return { segment: Number(n >> BYTE_BITS), byte: Number(n & ((1n << BYTE_BITS) - 1n)) };
}

export function comparePositions(a: SpoolPosition, b: SpoolPosition): number {
  return a.segment - b.segment || a.byte - b.byte;
}

const segmentName = (n: number) => `${String(n).padStart(10, '0')}.ndjson`;

/**
 * The raw-poll log's write-ahead spool: every poll is appended here (synchronously, so it is on
 * disk before `publish` returns and a crash of the process loses none) and the bus sends it to
 * Kafka from here. Segments of about 4 MiB: a segment wholly before the sent position is deleted,
 * so the spool stays small while Kafka keeps up and grows only while it is away.
 *
 * Reads are asynchronous and bounded (one chunk per call), so draining a large spool never holds
 * the event loop.
 */
export class Spool {
  readonly dir: string;
  private writeSegment: number;
  private writeBytes: number;
  private fd: number;
  private readonly sizes = new Map<number, number>();

  constructor(dir: string) {
    this.dir = dir;
    const segments = this.segments();
    this.writeSegment = segments.at(-1) ?? SPOOL_START.segment;
    for (const n of segments) this.sizes.set(n, statSync(this.path(n)).size);
    this.fd = openSync(this.path(this.writeSegment), 'a');
    this.writeBytes = this.dropTornTail();
    this.sizes.set(this.writeSegment, this.writeBytes);
  }

  /** Appends one line (no newline in it: JSON). */
  append(line: string): void {
    if (this.writeBytes >= SEGMENT_BYTES) this.rotate();
    const bytes = Buffer.from(line + '\n');
    writeSync(this.fd, bytes);
    this.writeBytes += bytes.length;
    this.sizes.set(this.writeSegment, this.writeBytes);
  }

  /** The position after the last line appended. */
  end(): SpoolPosition {
    return { segment: this.writeSegment, byte: this.writeBytes };
  }

  /** Bytes appended after `from` (what is not on Kafka yet when `from` is the sent position). */
  bytesAfter(from: SpoolPosition): number {
    let total = 0;
    for (const [n, size] of this.sizes) {
      if (n > from.segment) total += size;
      else if (n === from.segment) total += Math.max(0, size - from.byte);
    }
    return total;
  }

  /**
   * Whole lines from `from` on, up to about `maxBytes` (at least one line, all of one segment),
   * where they start and the position after them; null when nothing follows `from`. A position
   * in a segment that no longer exists (deleted by hand) moves to the next one there is.
   */
  async read(from: SpoolPosition, maxBytes: number): Promise<{ lines: string[]; start: SpoolPosition; next: SpoolPosition } | null> {
    let at = this.settle(from);
    while (at) {
      const size = this.sizes.get(at.segment) ?? 0;
      if (at.byte < size) {
        const lines = await this.readLines(at, Math.min(size - at.byte, maxBytes), size - at.byte);
        // `start` is where the lines begin: the next segment's start when `from` was at a segment's end.
        return { lines: lines.lines, start: at, next: { segment: at.segment, byte: at.byte + lines.bytes } };
      }
      at = this.settle({ segment: at.segment + 1, byte: 0 });
    }
    return null;
  }

  /** Deletes the segments wholly before `sent`: they are on Kafka. */
  removeBefore(sent: SpoolPosition): void {
    for (const n of [...this.sizes.keys()]) {
      if (n >= sent.segment || n === this.writeSegment) continue;
      unlinkSync(this.path(n));
      this.sizes.delete(n);
    }
  }

  /** The position last recorded by `savePosition` (this slot's own copy of what Kafka confirmed). */
  savedPosition(): SpoolPosition | null {
    const file = join(this.dir, 'position');
    if (!existsSync(file)) return null;
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as SpoolPosition;
      return Number.isInteger(saved.segment) && Number.isInteger(saved.byte) ? saved : null;
    } catch {
      return null;
    }
  }

  savePosition(sent: SpoolPosition): void {
    replaceFile(join(this.dir, 'position'), JSON.stringify(sent), false);
  }

  close(): void {
    closeSync(this.fd);
  }

  private segments(): number[] {
    return readdirSync(this.dir).filter((f) => /^\d{10}\.ndjson$/.test(f)).map((f) => Number(f.slice(0, 10))).sort((a, b) => a - b);
  }

  private path(n: number): string {
    return join(this.dir, segmentName(n));
  }

  private rotate(): void {
    closeSync(this.fd);
    this.writeSegment++;
    this.fd = openSync(this.path(this.writeSegment), 'a');
    this.writeBytes = 0;
    this.sizes.set(this.writeSegment, 0);
  }

  /** The first existing segment at or after `from`, as a position; null past the last one. */
  private settle(from: SpoolPosition): SpoolPosition | null {
    if (this.sizes.has(from.segment)) return from;
    const next = [...this.sizes.keys()].filter((n) => n > from.segment).sort((a, b) => a - b)[0];
    return next === undefined ? null : { segment: next, byte: 0 };
  }

  private async readLines(at: SpoolPosition, want: number, available: number): Promise<{ lines: string[]; bytes: number }> {
    const handle = await open(this.path(at.segment), 'r');
    try {
      for (let size = want; ; size = Math.min(available, size * 2)) {
        const buffer = Buffer.alloc(size);
        const { bytesRead } = await handle.read(buffer, 0, size, at.byte);
        const end = buffer.subarray(0, bytesRead).lastIndexOf(0x0a) + 1;
        // A line longer than the chunk: read more (every appended line ends in a newline).
        if (end === 0 && size < available) continue;
        return { lines: buffer.subarray(0, end).toString('utf8').split('\n').filter(Boolean), bytes: end };
      }
    } finally {
      await handle.close();
    }
  }

  /**
   * A crash in the middle of an append leaves a line without its newline: cut it off, so the next
   * line starts on its own (that poll was never acknowledged to anyone: its append had not returned).
   */
  private dropTornTail(): number {
    const size = statSync(this.path(this.writeSegment)).size;
    if (size === 0) return 0;
    const text = readFileSync(this.path(this.writeSegment));
    const end = text.lastIndexOf(0x0a) + 1;
    if (end !== size) ftruncateSync(this.fd, end);
    return end;
  }
}
