import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testing.ts';
import { EmbeddedPushKv } from './kv-embedded.ts';
import { RedisPushKv } from './kv-redis.ts';
import type { PushKv } from './kv.ts';

interface KvHarness {
  name: string;
  open(clock?: () => number): Promise<{ kv: PushKv; reopen(): Promise<PushKv>; cleanup(): Promise<void> }>;
}

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

const redis: KvHarness = {
  name: 'redis',
  async open() {
    const client = new Redis(await testRedisUrl());
    const ns = `${testNamespace()}push:`;
    return {
      kv: new RedisPushKv(client, ns),
      async reopen() { return new RedisPushKv(client, ns); },
      async cleanup() { await deleteUnder(client, ns); client.disconnect(); },
    };
  },
};

describe.each([embedded, redis])('push state store ($name)', (harness) => {
  let cleanup: () => Promise<void> = async () => {};
  afterEach(async () => { await cleanup(); });

  it('update is atomic: 50 concurrent increments count 50', async () => {
    const opened = await harness.open();
    cleanup = opened.cleanup;
    await Promise.all(Array.from({ length: 50 }, () => opened.kv.update<{ n: number }, void>('{k}counter', (c) => ({ next: { n: (c?.n ?? 0) + 1 }, result: undefined }))));
    expect(await opened.kv.get('{k}counter')).toEqual({ n: 50 });
  });

  it('update can leave a document alone, delete it, and answer a result', async () => {
    const opened = await harness.open();
    cleanup = opened.cleanup;
    await opened.kv.set('{k}doc', { a: 1 });
    expect(await opened.kv.update<{ a: number }, number>('{k}doc', (c) => ({ result: c!.a }))).toBe(1);
    await opened.kv.update('{k}doc', () => ({ next: null, result: undefined }));
    expect(await opened.kv.get('{k}doc')).toBeNull();
    expect(await opened.kv.getMany(['{k}doc', '{k}none'])).toEqual([null, null]);
  });

  it('documents with a time to live expire', async () => {
    let now = Date.now();
    const opened = await harness.open(() => now);
    cleanup = opened.cleanup;
    await opened.kv.set('{k}short', { a: 1 }, 50);
    await opened.kv.set('{k}long', { a: 2 });
    now += 200;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await opened.kv.getMany(['{k}short', '{k}long'])).toEqual([null, { a: 2 }]);
  });

  it('sets, capped lists and a schedule whose claims are leased', async () => {
    const opened = await harness.open();
    cleanup = opened.cleanup;
    const { kv } = opened;
    expect(await kv.setAdd('{k}set', 'a')).toBe(true);
    expect(await kv.setAdd('{k}set', 'a')).toBe(false);
    await kv.setAdd('{k}set', 'b');
    await kv.setRemove('{k}set', 'a');
    expect(await kv.setMembers('{k}set')).toEqual(['b']);

    for (let i = 0; i < 5; i++) await kv.listPush('{k}list', { i }, 3);
    expect(await kv.listRange('{k}list', 10)).toEqual([{ i: 4 }, { i: 3 }, { i: 2 }]);

    await kv.schedule('due', 'late', 3_000);
    await kv.schedule('due', 'early', 1_000);
    await kv.schedule('due', 'future', 9_000);
    expect(await kv.nextDue('due')).toBe(1_000);
    expect(await kv.claimDue('due', 5_000, 10_000, 10)).toEqual(['early', 'late']);
    // Leased: nobody else gets them until the lease ends.
    expect(await kv.claimDue('due', 6_000, 10_000, 10)).toEqual([]);
    expect(await kv.claimDue('due', 15_000, 10_000, 1)).toEqual(['future']);
    await kv.unschedule('due', 'late');
    expect(await kv.claimDue('due', 99_000, 10_000, 10)).toEqual(['early', 'future']);
  });

  it('what was written is there after a reopen', async () => {
    const opened = await harness.open();
    cleanup = opened.cleanup;
    await opened.kv.set('{k}doc', { a: 1 });
    await opened.kv.setAdd('{k}set', 'm');
    await opened.kv.schedule('due', 'x', 10);
    await opened.kv.listPush('{k}list', 'v', 5);
    const kv = await opened.reopen();
    expect(await kv.get('{k}doc')).toEqual({ a: 1 });
    expect(await kv.setMembers('{k}set')).toEqual(['m']);
    expect(await kv.claimDue('due', 100, 1000, 5)).toEqual(['x']);
    expect(await kv.listRange('{k}list', 5)).toEqual(['v']);
  });
});

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
    appendFileSync(join(dir, 'push', 'journal.ndjson'), '{"o":"set","k":"c","v":');
    const again = new EmbeddedPushKv(dir, () => now);
    expect(await again.getMany(['a', 'gone', 'b', 'c'])).toEqual([{ v: 1 }, null, { v: 3 }, null]);
    expect(await again.setMembers('s')).toEqual(['m']);
    await again.close();
  });
});
