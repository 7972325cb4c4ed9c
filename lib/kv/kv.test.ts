import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedKv } from './embedded.ts';
import { appendToFile } from './files.ts';
import { kvSuite, type KvHarness } from './testutil/kv.suite.ts';

const dirs: string[] = [];
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); });
const newDir = () => { const dir = mkdtempSync(join(tmpdir(), 'kv-')); dirs.push(dir); return dir; };

const embedded: KvHarness = {
  name: 'embedded',
  async open(clock) {
    const dir = newDir();
    let kv = new EmbeddedKv(dir, clock);
    return {
      kv,
      async reopen() { await kv.close(); kv = new EmbeddedKv(dir, clock); return kv; },
      async cleanup() { await kv.close(); },
    };
  },
  async forChild() {
    const dir = newDir();
    const opened: EmbeddedKv[] = [];
    return {
      store: { kind: 'embedded', dir },
      open: () => { const kv = new EmbeddedKv(dir); opened.push(kv); return kv; },
      async cleanup() { for (const kv of opened) await kv.close(); },
    };
  },
};
kvSuite(embedded);

describe('embedded key-value store', () => {
  it('resolves every write only after an fsync, one fsync for the writes of one moment; reads fsync nothing', async () => {
    const kv = new EmbeddedKv(newDir(), () => 1_000);
    expect(kv.syncs).toBe(0);
    await kv.set('{p}endpoint', { url: 'https://example.in/hook' });
    expect(kv.syncs).toBe(1);
    await Promise.all([
      kv.schedule('{p}queue', 'e1', 2_000), kv.listPush('{p}attempts', { status: 200 }, 10), kv.setAdd('{p}set', 'm'),
      kv.transact(['{p}a'], () => ({ writes: [{ key: '{p}a', value: 1 }], result: null })), kv.increment('{p}count', 60_000),
    ]);
    expect(kv.syncs).toBe(2);
    for (const write of [() => kv.delete('{p}a'), () => kv.unschedule('{p}queue', 'e1'), () => kv.setRemove('{p}set', 'm')]) {
      const before = kv.syncs;
      await write();
      expect(kv.syncs).toBe(before + 1);
    }
    const before = kv.syncs;
    await kv.get('{p}endpoint');
    await kv.listRange('{p}attempts', 10);
    await kv.claimDue('{p}queue', 3_000, 1_000, 10);
    expect(kv.syncs).toBe(before);
    await kv.close();
  });

  it('a compaction keeps everything but expired documents, and a torn last journal line is ignored', async () => {
    const dir = newDir();
    let now = 1_000;
    const kv = new EmbeddedKv(dir, () => now);
    await kv.set('a', { v: 1 });
    await kv.set('gone', { v: 2 }, 10);
    await kv.setAdd('s', 'm');
    now = 2_000;
    kv.compact();
    await kv.set('b', { v: 3 });
    await kv.close();
    const [journal] = readdirSync(dir).filter((name) => name.startsWith('journal-'));
    // A step torn by a crash: none of its changes apply.
    appendToFile(join(dir, journal!), '{"o":"step","e":[{"o":"set","k":"c","v":1},{"o":"set","k":"d","v":');
    const again = new EmbeddedKv(dir, () => now);
    expect(await again.getMany(['a', 'gone', 'b', 'c', 'd'])).toEqual([{ v: 1 }, null, { v: 3 }, null, null]);
    expect(await again.setMembers('s')).toEqual(['m']);
    await again.close();
  });

  it('opens the files of the previous version (DATA_DIR/push: snapshot.json without a generation and journal.ndjson)', async () => {
    const dir = newDir();
    // As lib/push/kv-embedded.ts wrote them: a compaction's snapshot, then changes, the last torn.
    writeFileSync(join(dir, 'snapshot.json'), JSON.stringify({
      docs: [['{k}doc', { a: 1 }, null], ['{k}old', 1, 500]], sets: [['{k}set', ['m']]], zsets: [['due', [['q', 10]]]], lists: [['{k}list', ['v']]],
    }));
    writeFileSync(join(dir, 'journal.ndjson'), [
      '{"o":"set","k":"{k}doc","v":{"a":2}}',
      '{"o":"step","e":[{"o":"sadd","k":"{k}set","m":"n"},{"o":"lpush","k":"{k}list","v":"w","n":5}]}',
      '{"o":"zadd","k":"due","m":"r","s":20}',
      '{"o":"set","k":"{k}torn"',
    ].join('\n'));
    const kv = new EmbeddedKv(dir, () => 1_000);
    expect(await kv.getMany(['{k}doc', '{k}old', '{k}torn'])).toEqual([{ a: 2 }, null, null]);
    expect((await kv.setMembers('{k}set')).sort()).toEqual(['m', 'n']);
    expect(await kv.listRange('{k}list', 5)).toEqual(['w', 'v']);
    expect(await kv.claimDue('due', 100, 1_000, 5)).toEqual(['q', 'r']);
    await kv.close();
    // Upgraded at that open: the new layout, the same state.
    expect(readdirSync(dir).sort()).toEqual(['journal-1.ndjson', 'snapshot.json']);
    const again = new EmbeddedKv(dir, () => 1_000);
    expect(await again.get('{k}doc')).toEqual({ a: 2 });
    expect(await again.listRange('{k}list', 5)).toEqual(['w', 'v']);
    await again.close();
  });
});
