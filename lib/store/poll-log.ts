import { createReadStream, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { appendToFileLater } from '../kv/files.ts';
import { CarrierPollSchema, type CarrierPoll } from '../schemas/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { cutTornTail } from './torn-tail.ts';

/** Where the embedded default keeps its raw-poll log under DATA_DIR (replay reads it directly). */
export function pollLogPath(dataDir: string): string {
  return join(dataDir, 'polls.ndjson');
}

/** One line of the log: the poll (personal data already removed) and the key mode it was made for. */
export interface LoggedPoll {
  mode: KeyMode;
  poll: CarrierPoll;
}

export interface ReadOptions {
  onDamaged?: (lineNumber: number) => void;
  onEnd?: (offset: number) => void;
}

/** A logged poll and the byte offset just past its line. */
export interface PositionedPoll extends LoggedPoll {
  end: number;
}

export interface PollLogOptions {
  /** Told when the first append cut a torn last line off the log. Default: a warning on stderr. */
  warn?: (message: string) => void;
}

/**
 * The embedded default's raw-poll log: append-only NDJSON under DATA_DIR, the single-process twin
 * of the Kafka topic. Everything else (shipments, lanes) is rebuilt from it at start, so a restart
 * loses no events. Appends are batched per tick and written in order.
 *
 * A crash in the middle of a batch leaves a last line without its newline. The first append of
 * this PollLog cuts it off (with a warning) before writing, so the first new poll starts on a line
 * of its own instead of being glued onto the torn one and lost as a damaged line at the next start.
 * The cut waits for the first append, not the constructor: readers (a store move, the CLIs) open a
 * PollLog too, possibly while the service writes, and a reader must never cut a line in flight.
 */
export class PollLog {
  private readonly path: string;
  private readonly warn: (message: string) => void;
  private pending: string[] = [];
  private writing: Promise<void> = Promise.resolve();
  private tailChecked = false;
  private appended = 0;

  constructor(dataDir: string, options: PollLogOptions = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.path = pollLogPath(dataDir);
    this.warn = options.warn ?? ((message) => console.warn(message));
  }

  append(entry: LoggedPoll): void {
    const line = JSON.stringify(entry) + '\n';
    this.appended += Buffer.byteLength(line);
    this.pending.push(line);
    if (this.pending.length === 1) {
      this.writing = this.writing.then(async () => {
        if (!this.tailChecked) {
          const dropped = await cutTornTail(this.path);
          if (dropped > 0) this.warn(`${this.path}: dropped a torn last line (${dropped} bytes, a crash mid-write) so new polls start on a line of their own`);
          this.tailChecked = true;
        }
        const batch = this.pending.join('');
        this.pending = [];
        return appendToFileLater(this.path, batch);
      });
    }
  }

  /** Resolves once every appended line is on disk. */
  async flush(): Promise<void> {
    while (this.pending.length) await this.writing;
    await this.writing;
  }

  /**
   * Every logged poll, oldest first; a damaged line is skipped and counted. A last piece without
   * its newline is not a line yet (a write in flight, or torn by a crash, which the next writer's
   * first append cuts off): it is neither read nor counted.
   */
  async *read(onDamaged: (lineNumber: number) => void = () => {}): AsyncGenerator<LoggedPoll> {
    for await (const { mode, poll } of this.readFrom(0, { onDamaged })) yield { mode, poll };
  }

  /**
   * The logged polls from byte `fromOffset` on (a line's start: 0, or an `end` read before), each
   * with the offset just past its line: where a reader that stopped there goes on (the embedded
   * checkpoint, lib/pipeline/checkpoint.ts, keeps it). Line numbers count from `fromOffset`.
   * `onEnd`: told at the end the offset past the last whole line (damaged ones too), where the
   * first append's torn-tail cut leaves the file. Lines are cut on bytes and decoded whole, so a
   * character split between two chunks reads whole.
   */
  async *readFrom(fromOffset: number, options: ReadOptions = {}): AsyncGenerator<PositionedPoll> {
    const onDamaged = options.onDamaged ?? (() => {});
    if (!existsSync(this.path)) {
      options.onEnd?.(fromOffset);
      return;
    }
    let lineNumber = 0;
    let rest: Buffer | null = null;
    // The file offset of the first byte of `rest` (or of the next chunk when there is none).
    let at = fromOffset;
    for await (const read of createReadStream(this.path, { start: fromOffset }) as AsyncIterable<Buffer>) {
      const chunk: Buffer = rest ? Buffer.concat([rest, read]) : read;
      let start = 0;
      for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, start)) {
        lineNumber++;
        const line = chunk.toString('utf8', start, newline);
        start = newline + 1;
        if (!line.trim()) continue;
        try {
          const value = JSON.parse(line) as { mode?: unknown; poll?: unknown };
          const poll = CarrierPollSchema.parse(value.poll);
          yield { mode: value.mode === 'test' ? 'test' : 'live', poll, end: at + start };
        } catch {
          onDamaged(lineNumber);
        }
      }
      at += start;
      rest = start < chunk.length ? chunk.subarray(start) : null;
    }
    options.onEnd?.(at);
  }

  /**
   * Bytes appended through this PollLog since it was opened (pending ones included): a reader that
   * read the log to offset E before the first append holds the state of offset E + this.
   */
  get appendedBytes(): number {
    return this.appended;
  }
}
