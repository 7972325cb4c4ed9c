import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive } from './services/process.ts';

// The test services are found again by pidfile and command line; another program of the same
// name on the machine (a system Redis, another checkout's ClickHouse) must never pass for ours.
describe('test/services/process.ts: alive', () => {
  const dir = mkdtempSync(join(tmpdir(), 'services-process-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('does not take another process of the same name for ours when our pidfile is missing', () => {
    // This test's own process is a node: a bare name would match it.
    const pidfile = join(dir, 'not-made-yet', 'redis.pid');
    expect(alive(pidfile, 'node')).toBe(false);
  });

  it('finds ours again by a command line naming our files, and writes the pidfile back', () => {
    const ownFile = process.argv.find((arg) => arg.startsWith('/')) ?? process.execPath;
    const pidfile = join(dir, 'found.pid');
    expect(alive(pidfile, ownFile)).toBe(true);
    expect(Number(readFileSync(pidfile, 'utf8'))).toBeGreaterThan(0);
  });
});
