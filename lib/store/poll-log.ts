import { createReadStream, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { appendToFileLater } from '../kv/files.ts';
import { CarrierPollSchema, type CarrierPoll } from '../schemas/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** Where the embedded default keeps its raw-poll log under DATA_DIR (replay reads it directly). */
export function pollLogPath(dataDir: string): string {
  return join(dataDir, 'polls.ndjson');
}

/** One line of the log: the poll (personal data already removed) and the key mode it was made for. */
export interface LoggedPoll {
  mode: KeyMode;
  poll: CarrierPoll;
}

/**
 * The embedded default's raw-poll log: append-only NDJSON under DATA_DIR, the single-process twin
 * of the Kafka topic. Everything else (shipments, lanes) is rebuilt from it at start, so a restart
 * loses no events. Appends are batched per tick and written in order.
 */
export class PollLog {
  private readonly path: string;
  private pending: string[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = pollLogPath(dataDir);
  }

  append(entry: LoggedPoll): void {
    this.pending.push(JSON.stringify(entry) + '\n');
    if (this.pending.length === 1) {
      this.writing = this.writing.then(() => {
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

  /** Every logged poll, oldest first; a damaged line (e.g. a crash mid-write) is skipped and counted. */
  async *read(onDamaged: (lineNumber: number) => void = () => {}): AsyncGenerator<LoggedPoll> {
    if (!existsSync(this.path)) return;
    let lineNumber = 0;
    for await (const line of createInterface({ input: createReadStream(this.path), crlfDelay: Infinity })) {
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
