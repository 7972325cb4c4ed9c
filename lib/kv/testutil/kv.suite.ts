import { afterEach, describe, expect, it } from 'vitest';
import { startChildApp } from '../../testutil/child-app.ts';
import type { Kv } from '../kv.ts';
import type { KvChildStore } from './kv-crash-child.ts';

/** The key-value store's contract, run against each backend (kv.test.ts: embedded; kv.services.test.ts: Redis and Redis Cluster). */
export interface KvHarness {
  name: string;
  open(clock?: () => number): Promise<{ kv: Kv; reopen(): Promise<Kv>; cleanup(): Promise<void> }>;
  /** A store for another process to write (kv-crash-child.ts), and this process's handle on it once that one is dead. */
  forChild(): Promise<{ store: KvChildStore; open(): Kv; cleanup(): Promise<void> }>;
}

export function kvSuite(harness: KvHarness): void {
  describe(`key-value store (${harness.name})`, () => {
    let cleanup: () => Promise<void> = async () => {};
    afterEach(async () => { await cleanup(); });

    it('update is atomic: 50 concurrent increments count 50', async () => {
      const opened = await harness.open();
      cleanup = opened.cleanup;
      const increment = (c: { n: number } | null) => ({ next: { n: (c?.n ?? 0) + 1 }, result: undefined });
      await Promise.all(Array.from({ length: 50 }, () => opened.kv.update('{k}counter', increment)));
      expect(await opened.kv.get('{k}counter')).toEqual({ n: 50 });
    });

    it('increment counts 500 concurrent callers exactly, survives a reopen and expires', async () => {
      let now = Date.now();
      const opened = await harness.open(() => now);
      cleanup = opened.cleanup;
      // A time to live far above the time 500 calls take on a loaded machine, so none sees it expire.
      const counts = await Promise.all(Array.from({ length: 500 }, () => opened.kv.increment('{k}hits', 1_500)));
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
      expect(await (await opened.reopen()).get('{k}hits')).toBe(500);
      now += 1_700;
      await new Promise((resolve) => setTimeout(resolve, 1_700));
      expect(await (await opened.reopen()).get('{k}hits')).toBeNull();
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

    it('transact writes several documents, set members and list items together, against what it read', async () => {
      const opened = await harness.open();
      cleanup = opened.cleanup;
      const { kv } = opened;
      await kv.set('{k}a', { n: 1 });
      const result = await kv.transact(['{k}a', '{k}b'], ([a, b]) => ({
        writes: [{ key: '{k}a', value: { n: (a as { n: number }).n + 1 } }, { key: '{k}b', value: { seen: b } }, { key: '{k}c', value: 'c', ttlMs: 60_000 }],
        setAdds: [{ key: '{k}set', member: 'm' }],
        listPushes: [{ key: '{k}list', value: { i: 1 }, keep: 2 }, { key: '{k}list', value: { i: 2 }, keep: 2 }, { key: '{k}list', value: { i: 3 }, keep: 2 }],
        result: 'done',
      }));
      expect(result).toBe('done');
      expect(await kv.getMany(['{k}a', '{k}b', '{k}c'])).toEqual([{ n: 2 }, { seen: null }, 'c']);
      expect(await kv.setMembers('{k}set')).toEqual(['m']);
      expect(await kv.listRange('{k}list', 10)).toEqual([{ i: 3 }, { i: 2 }]);
      // A null value deletes; a step with nothing to write changes nothing and answers its result.
      await kv.transact(['{k}a'], () => ({ writes: [{ key: '{k}a', value: null }], result: undefined }));
      expect(await kv.transact(['{k}a', '{k}b'], (docs) => ({ result: docs }))).toEqual([null, { seen: null }]);
    });

    it('transact is atomic over its documents: 40 concurrent steps moving one unit from a to b keep the sum', async () => {
      const opened = await harness.open();
      cleanup = opened.cleanup;
      const { kv } = opened;
      await kv.set('{k}a', { n: 40 });
      await Promise.all(Array.from({ length: 40 }, () => kv.transact(['{k}a', '{k}b'], ([a, b]) => ({
        writes: [{ key: '{k}a', value: { n: (a as { n: number }).n - 1 } }, { key: '{k}b', value: { n: ((b as { n: number } | null)?.n ?? 0) + 1 } }],
        result: undefined,
      }))));
      expect(await kv.getMany(['{k}a', '{k}b'])).toEqual([{ n: 0 }, { n: 40 }]);
    });

    it('transact computes from what is stored, not from what this process saw last', async () => {
      const opened = await harness.open();
      cleanup = opened.cleanup;
      const { kv } = opened;
      await kv.set('{k}a', { n: 1 });
      expect(await kv.get('{k}a')).toEqual({ n: 1 });
      // Another process's store (with Redis a second client object over the same data) changes it.
      const other = harness.name === 'embedded' ? kv : await opened.reopen();
      await other.update<{ n: number }, void>('{k}a', (a) => ({ next: { n: a!.n + 10 }, result: undefined }));
      await other.set('{k}fresh', { n: 5 });
      const seen = await kv.transact(['{k}a', '{k}fresh'], ([a, fresh]) => ({
        writes: [{ key: '{k}a', value: { n: (a as { n: number }).n + 1 } }], result: [a, fresh],
      }));
      expect(seen).toEqual([{ n: 11 }, { n: 5 }]);
      expect(await other.get('{k}a')).toEqual({ n: 12 });
    });

    it('unscheduleIf takes a member off only while its due time is the one given', async () => {
      const opened = await harness.open();
      cleanup = opened.cleanup;
      const { kv } = opened;
      await kv.schedule('due', 'm', 1_000);
      expect(await kv.claimDue('due', 1_000, 500, 10)).toEqual(['m']);
      expect(await kv.unscheduleIf('due', 'm', 1_500)).toBe(true);
      expect(await kv.nextDue('due')).toBeNull();
      await kv.schedule('due', 'm', 1_000);
      expect(await kv.claimDue('due', 1_000, 500, 10)).toEqual(['m']);
      // Scheduled again meanwhile (an enqueue): the holder of the old lease leaves it alone.
      await kv.schedule('due', 'm', 1_200);
      expect(await kv.unscheduleIf('due', 'm', 1_500)).toBe(false);
      expect(await kv.claimDue('due', 1_200, 500, 10)).toEqual(['m']);
      expect(await kv.unscheduleIf('due', 'absent', 1_500)).toBe(false);
    });

    it('what was written is there after a reopen', async () => {
      const opened = await harness.open();
      cleanup = opened.cleanup;
      await opened.kv.set('{k}doc', { a: 1 });
      await opened.kv.setAdd('{k}set', 'm');
      await opened.kv.schedule('due', 'x', 10);
      await opened.kv.listPush('{k}list', 'v', 5);
      await opened.kv.transact([], () => ({
        writes: [{ key: '{k}t1', value: 1 }, { key: '{k}t2', value: 2 }], setAdds: [{ key: '{k}set', member: 'n' }], result: undefined,
      }));
      const kv = await opened.reopen();
      expect(await kv.getMany(['{k}t1', '{k}t2'])).toEqual([1, 2]);
      expect((await kv.setMembers('{k}set')).sort()).toEqual(['m', 'n']);
      expect(await kv.get('{k}doc')).toEqual({ a: 1 });
      expect(await kv.claimDue('due', 100, 1000, 5)).toEqual(['x']);
      expect(await kv.listRange('{k}list', 5)).toEqual(['v']);
    });

    it('a process killed with SIGKILL mid-stream keeps every step it was answered, each step whole', { timeout: 60_000 }, async () => {
      const store = await harness.forChild();
      cleanup = store.cleanup;
      const child = await startChildApp('lib/kv/testutil/kv-crash-child.ts', store.store, {});
      child.child.kill('SIGKILL');
      expect((await child.exited).signal, child.stderr()).toBe('SIGKILL');
      const kv = store.open();
      // Each round's increment follows its step: every step counted is there, and the one after
      // the last count (if the kill came between its step and its increment) whole or not at all.
      const count = (await kv.get<number>('{c}count'))!;
      expect(count).toBeGreaterThanOrEqual(Number(child.readyWith));
      const members = new Set(await kv.setMembers('{c}set'));
      for (let n = 0; n <= count + 1; n++) {
        const [a, b] = await kv.getMany([`{c}a${n}`, `{c}b${n}`]);
        if (n < count) expect([a, b, members.has(String(n))]).toEqual([n, n, true]);
        else if (n === count) expect([b, members.has(String(n))]).toEqual(a === null ? [null, false] : [n, true]);
        else expect([a, b, members.has(String(n))]).toEqual([null, null, false]);
      }
    });
  });
}
