import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { replaceFile } from '../kv/index.ts';
import { stateOf, type AddressThrottle, type ThrottleRule, type ThrottleState } from './rule.ts';

const FileSchema = z.record(z.string(), z.array(z.number()));
/** Attempts older than this are dropped when the file is written: longer than any rule's window. */
const KEEP_MS = 24 * 3_600_000;

/**
 * The embedded default's throttle: attempts in memory, the whole map written to
 * `DATA_DIR/throttle/attempts.json` after each one, replaced whole (lib/kv `replaceFile`: temp file
 * and rename; not fsynced: whole through a crash of the process). Attempts are rare (a trial key
 * issued, a wrong admin token; a blocked address writes nothing more), so a whole-file write is
 * cheap, and simpler than a journal. One process per DATA_DIR, as for the access store.
 */
export class EmbeddedThrottle implements AddressThrottle {
  private readonly file: string;
  private readonly attempts = new Map<string, number[]>();

  constructor(dataDir: string) {
    const dir = join(dataDir, 'throttle');
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, 'attempts.json');
    let text: string | null = null;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== null) {
      // The file is replaced whole by rename, so it is never torn: a bad one is someone's edit.
      const parsed = FileSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(`${this.file} is not a throttle file: ${parsed.error.message}`);
      for (const [counter, times] of Object.entries(parsed.data)) this.attempts.set(counter, times);
    }
  }

  async check(rule: ThrottleRule, address: string, now: number): Promise<ThrottleState> {
    return stateOf(rule, this.attempts.get(counterOf(rule, address)) ?? [], now);
  }

  async record(rule: ThrottleRule, address: string, now: number): Promise<void> {
    const counter = counterOf(rule, address);
    const times = (this.attempts.get(counter) ?? []).filter((at) => now - at < rule.windowMs);
    this.attempts.set(counter, [...times, now]);
    for (const [name, list] of this.attempts) {
      const kept = list.filter((at) => now - at < KEEP_MS);
      if (kept.length === 0) this.attempts.delete(name);
      else this.attempts.set(name, kept);
    }
    replaceFile(this.file, JSON.stringify(Object.fromEntries(this.attempts)), false);
  }

  async close(): Promise<void> {}
}

function counterOf(rule: ThrottleRule, address: string): string {
  return `${rule.name}:${address}`;
}
