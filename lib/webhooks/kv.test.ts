import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedPushKv } from './kv-embedded.ts';
import { pushKvSuite, type KvHarness } from './kv.suite.ts';

const dirs: string[] = [];
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); });

const embedded: KvHarness = {
  name: 'embedded',
  async open(clock) {
    const dir = mkdtempSync(join(tmpdir(), 'push-kv-'));
    dirs.push(dir);
    let kv = new EmbeddedPushKv(dir, clock);
    return {
      kv,
      async reopen() { await kv.close(); kv = new EmbeddedPushKv(dir, clock); return kv; },
      async cleanup() { await kv.close(); },
    };
  },
};
pushKvSuite(embedded);

describe('embedded push state store', () => {
  it('a compaction keeps everything but expired documents, and a torn last journal line is ignored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'push-kv-'));
    dirs.push(dir);
    let now = 1_000;
    const kv = new EmbeddedPushKv(dir, () => now);
    await kv.set('a', { v: 1 });
    await kv.set('gone', { v: 2 }, 10);
    await kv.setAdd('s', 'm');
    now = 2_000;
    kv.compact();
    await kv.set('b', { v: 3 });
    await kv.close();
    const { appendFileSync } = await import('node:fs');
    // A step torn by a crash: none of its changes apply.
    appendFileSync(join(dir, 'push', 'journal.ndjson'), '{"o":"step","e":[{"o":"set","k":"c","v":1},{"o":"set","k":"d","v":');
    const again = new EmbeddedPushKv(dir, () => now);
    expect(await again.getMany(['a', 'gone', 'b', 'c', 'd'])).toEqual([{ v: 1 }, null, { v: 3 }, null, null]);
    expect(await again.setMembers('s')).toEqual(['m']);
    await again.close();
  });
});
