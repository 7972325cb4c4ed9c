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

  constructor(dataDir: string, options: PollLogOptions = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.path = pollLogPath(dataDir);
    this.warn = options.warn ?? ((message) => console.warn(message));
  }

  append(entry: LoggedPoll): void {
    this.pending.push(JSON.stringify(entry) + '\n');
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
    if (!existsSync(this.path)) return;
    let lineNumber = 0;
    let rest = '';
    // utf8 decoding on the stream: a character split between two chunks is decoded whole.
    for await (const chunk of createReadStream(this.path, { encoding: 'utf8' }) as AsyncIterable<string>) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        lineNumber++;
        if (!line.trim()) continue;
        try {
          const value = JSON.parse(line) as { mode?: unknown; poll?: unknown };
          const poll = CarrierPollSchema.parse(value.poll);
          yield { mode: value.mode === 'test' ? 'test' : 'live', poll };
        } catch {
          onDamaged(lineNumber);
        }
      }
    }
  }
}
