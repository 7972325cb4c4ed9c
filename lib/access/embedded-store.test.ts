/** What only the embedded store has: files under DATA_DIR/access that survive crashes. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendToFile } from '../kv/index.ts';
import { EmbeddedAccessStore, embeddedAccessDir } from './embedded-store.ts';
import { keyPrefix } from './key-format.ts';
import { plans } from './testutil/stores.ts';

const now = new Date('2026-11-21T10:00:00.000Z');
const CHILD = fileURLToPath(new URL('./testutil/crash-child.ts', import.meta.url));

let dir: string;
beforeEach(() => {
  dir = embeddedAccessDir(mkdtempSync(join(tmpdir(), 'access-embedded-')));
});
afterEach(() => {
  rmSync(join(dir, '..'), { recursive: true, force: true });
});

/** Runs the child until it kills itself; returns the key it created. */
async function crashAfter(lookups: number): Promise<string> {
  const run = promisify(execFile)(process.execPath, [CHILD, dir, String(lookups)]);
  const failure = await run.then(() => null, (err: { signal?: string; stdout?: string }) => err);
  expect(failure?.signal).toBe('SIGKILL');
  return (JSON.parse(failure?.stdout ?? '') as { key: string }).key;
}

const journalFiles = () => readdirSync(dir).filter((f) => f.startsWith('journal-'));

describe('embedded access store files', () => {
  it('lives under DATA_DIR/access', () => {
    expect(embeddedAccessDir('/srv/data')).toBe('/srv/data/access');
  });

  it('loses no key and no counted lookup when the process is killed without closing', async () => {
    const key = await crashAfter(7);
    const store = new EmbeddedAccessStore({ plans, dir });
    const record = await store.getByKey(key);
    expect(record?.prefix).toBe(keyPrefix(key));
    expect(await store.usage(keyPrefix(key), new Date(now.getTime() + 10_000))).toEqual({ lookupsUsed: 7, dailyUsed: 7 });
    await store.close();
  });

  it('drops a line torn by a crash mid-write, keeping everything before it', async () => {
    const key = await crashAfter(3);
    const [journal] = journalFiles();
    appendToFile(join(dir, journal!), '{"op":"count","prefix":"trk_l');
    const store = new EmbeddedAccessStore({ plans, dir });
    expect(await store.usage(keyPrefix(key), now)).toEqual({ lookupsUsed: 3, dailyUsed: 3 });
    await store.close();
  });

  it('refuses to start from a journal damaged before its last line', async () => {
    await crashAfter(2);
    const [journal] = journalFiles();
    const path = join(dir, journal!);
    appendToFile(path, 'not json\n{"op":"count"}\n');
    expect(() => new EmbeddedAccessStore({ plans, dir })).toThrow(/line \d+ is damaged/);
  });

  it('compacts the journal into the snapshot, keeping one journal and the same state', async () => {
    const store = new EmbeddedAccessStore({ plans, dir, compactEvery: 5 });
    const { key, record } = await store.createKey({ plan: 'starter', mode: 'test', email: 'a@example.in' }, now);
    for (let i = 0; i < 12; i++) await store.consume(record, new Date(now.getTime() + i * 1000));
    const snapshot = JSON.parse(readFileSync(join(dir, 'snapshot.json'), 'utf8')) as { generation: number };
    // One compaction at open, then one every 5 entries (1 create + 12 counts = 13 entries).
    expect(snapshot.generation).toBe(3);
    expect(journalFiles()).toEqual(['journal-3.ndjson']);
    await store.close();
    expect(journalFiles()).toEqual(['journal-4.ndjson']);
    expect(readFileSync(join(dir, 'journal-4.ndjson'), 'utf8')).toBe('');

    const reopened = new EmbeddedAccessStore({ plans, dir });
    expect(await reopened.getByKey(key)).toEqual(record);
    expect(await reopened.usage(record.prefix, now)).toEqual({ lookupsUsed: 12, dailyUsed: 12 });
    await reopened.close();
  });

  it('group-commits the lookups of one event-loop turn: one journal line, every lookup counted', async () => {
    const store = new EmbeddedAccessStore({ plans, dir });
    const { key, record } = await store.createKey({ plan: 'growth', mode: 'live', email: 'group@example.in', burst_per_second: 1_000 }, now);
    const results = await Promise.all(Array.from({ length: 100 }, () => store.consume(record, now)));
    expect(results.every((r) => r.ok)).toBe(true);
    // Every lookup saw the ones granted before it in the same turn (exactness), not the written state.
    expect(results.map((r) => ('remaining' in r ? r.remaining.period : null)).sort((a, b) => b! - a!))
      .toEqual(Array.from({ length: 100 }, (_, i) => record.lookups_limit - 1 - i));
    const [journal] = journalFiles();
    const counts = readFileSync(join(dir, journal!), 'utf8').split('\n').filter((l) => l.includes('"op":"count"'));
    expect(counts).toEqual([expect.stringContaining('"delta":100')]);
    expect(await store.usage(record.prefix, now)).toEqual({ lookupsUsed: 100, dailyUsed: 100 });
    // Not closed: the journal alone must hold the 100 lookups.
    const reopened = new EmbeddedAccessStore({ plans, dir });
    expect(await reopened.usage(keyPrefix(key), now)).toEqual({ lookupsUsed: 100, dailyUsed: 100 });
    await reopened.close();
  });

  it('refuses changes after close', async () => {
    const store = new EmbeddedAccessStore({ plans, dir });
    await store.close();
    await expect(store.createKey({ plan: 'trial', mode: 'live', email: 'a@example.in' }, now)).rejects.toThrow(/closed/);
  });
});
