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
 * and rename). Attempts are rare (a trial key issued, a wrong admin token; a blocked address writes
 * nothing more), so a whole-file write is cheap, and simpler than a journal. One process per
 * DATA_DIR, as for the access store.
 *
 * Not fsynced, on purpose: the throttle only slows abuse down, so a power cut may lose its last
 * seconds (a few addresses get some attempts back). For the same reason a file that is missing,
 * empty or damaged (a power cut right after the rename can leave it empty on some file systems, or
 * someone edited it) is read as no attempts, with a warning: a throttle must never keep the
 * service from starting.
 */
export class EmbeddedThrottle implements AddressThrottle {
  private readonly file: string;
  private readonly attempts = new Map<string, number[]>();

  /** `warn`: where the warning about an unreadable file goes (default: stderr). */
  constructor(dataDir: string, warn: (message: string) => void = (message) => console.warn(message)) {
    const dir = join(dataDir, 'throttle');
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, 'attempts.json');
    const read = readAttempts(this.file);
    if ('problem' in read) warn(`throttle: ${this.file} ${read.problem}; starting with no attempts counted`);
    else for (const [counter, times] of Object.entries(read.attempts)) this.attempts.set(counter, times);
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

/** The file's attempts (none when it does not exist), or why it cannot be read. */
function readAttempts(file: string): { attempts: Record<string, number[]> } | { problem: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { attempts: {} };
    return { problem: `cannot be read (${(err as Error).message})` };
  }
  if (text.trim() === '') return { problem: 'is empty' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `is damaged (${(err as Error).message})` };
  }
  const parsed = FileSchema.safeParse(value);
  return parsed.success ? { attempts: parsed.data } : { problem: `is not a throttle file (${parsed.error.issues[0]?.message ?? 'bad shape'})` };
}

function counterOf(rule: ThrottleRule, address: string): string {
  return `${rule.name}:${address}`;
}
