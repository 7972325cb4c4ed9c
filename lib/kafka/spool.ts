import { existsSync, mkdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { appendToFile } from '../kv/files.ts';

/**
 * A file-backed FIFO of messages that could not be published yet. Appends are synchronous so a
 * poll is on disk before `publish` returns while the broker is away: a crash loses nothing.
 */
export class Spool {
  private readonly path: string;
  constructor(path: string) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
  }

  get pending(): boolean {
    return existsSync(this.path) && statSync(this.path).size > 0;
  }

  append(lines: string[]): void {
    if (lines.length) appendToFile(this.path, lines.map((l) => l + '\n').join(''));
  }

  /** Lines from byte `offset` on, and the offset after them (only whole lines). */
  readFrom(offset: number): { lines: string[]; next: number } {
    if (!existsSync(this.path)) return { lines: [], next: offset };
    const buffer = readFileSync(this.path);
    const end = buffer.lastIndexOf(0x0a) + 1;
    if (end <= offset) return { lines: [], next: offset };
    const text = buffer.subarray(offset, end).toString('utf8');
    return { lines: text.split('\n').filter(Boolean), next: end };
  }

  /** Removes the file once `offset` covers all of it; false when lines were appended meanwhile. */
  removeIfDrained(offset: number): boolean {
    if (!existsSync(this.path)) return true;
    if (statSync(this.path).size !== offset) return false;
    unlinkSync(this.path);
    return true;
  }
}
