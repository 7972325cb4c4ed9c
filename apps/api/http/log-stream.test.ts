/** The API's stdout log stream keeps every line when the process exits right after `flushLogs`. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('../testutil/log-child.ts', import.meta.url));
const NODE = process.execPath; // node runs the TypeScript itself

function linesWritten(count: number, mode: 'flush' | 'no-flush'): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(NODE, [CHILD, String(count), mode], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) reject(err);
      else resolve(stdout.split('\n').filter((line) => line !== ''));
    });
  });
}

describe('stdout log stream', () => {
  it('hands every line to stdout, in order, before an immediate exit', { timeout: 60_000 }, async () => {
    const lines = await linesWritten(20_000, 'flush');
    expect(lines).toHaveLength(20_000);
    expect(lines.every((line, i) => line === `{"line":${i}}`)).toBe(true);
  });

  it('would lose lines without the flush (so the test above can fail)', { timeout: 60_000 }, async () => {
    expect((await linesWritten(20_000, 'no-flush')).length).toBeLessThan(20_000);
  });
});
