/** Both idempotency stores (Redis: the real one) behave the same, and keep answers across a restart. */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deleteUnder, testNamespace, testRedisClusterUrl, testRedisUrl } from '../access/testutil/stores.ts';
import { appendToFile } from '../kv/index.ts';
import { connectRedis } from '../redis/index.ts';
import { EmbeddedIdempotencyStore } from './embedded.ts';
import { RedisIdempotencyStore } from './redis.ts';
import { CLAIM_LEASE_MS, IDEMPOTENCY_TTL_MS, type IdempotencyStore } from './store.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const ANSWER = { status: 200, body: '{"results":[]}' };

interface Opened {
  store: IdempotencyStore;
  /** A second store over the same data: another API instance (Redis) or a restart (embedded). */
  again(): Promise<IdempotencyStore>;
  dispose(): Promise<void>;
}

const kinds: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'embedded',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'idem-test-'));
      const opened: Opened = {
        store: new EmbeddedIdempotencyStore(dir, () => T0),
        async again() {
          await opened.store.close();
          opened.store = new EmbeddedIdempotencyStore(dir, () => T0);
          return opened.store;
        },
        async dispose() {
          await opened.store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
      return opened;
    },
  },
  ...([['redis', testRedisUrl], ['redis cluster', testRedisClusterUrl]] as const).map(([name, urlOf]) => ({
    name,
    async open(): Promise<Opened> {
      const url = await urlOf();
      const namespace = testNamespace();
      const connections = [connectRedis(url)];
      return {
        store: new RedisIdempotencyStore(connections[0]!, namespace),
        async again() {
          const other = connectRedis(url);
          connections.push(other);
          return new RedisIdempotencyStore(other, namespace);
        },
        async dispose() {
          await deleteUnder(connections[0]!, namespace);
          await Promise.all(connections.map((c) => c.quit()));
        },
      };
    },
  })),
];

describe.each(kinds)('$name idempotency store', (kind) => {
  let o: Opened;
  beforeEach(async () => { o = await kind.open(); });
  afterEach(async () => { await o.dispose(); });

  it('claims once, tells a concurrent request it is pending, then replays the answer', async () => {
    const first = await o.store.claim('scope', 'k1', 'fp', T0);
    expect(first.kind).toBe('claimed');
    expect(await o.store.claim('scope', 'k1', 'fp', T0 + 1)).toEqual({ kind: 'pending', fingerprint: 'fp' });
    await o.store.complete('scope', 'k1', 'fp', ANSWER, T0 + 2);
    expect(await o.store.claim('scope', 'k1', 'other', T0 + 3)).toEqual({ kind: 'done', fingerprint: 'fp', answer: ANSWER });
    // Another scope (another API key) never sees it.
    expect((await o.store.claim('scope2', 'k1', 'fp', T0 + 3)).kind).toBe('claimed');
  });

  it('keeps an answer 24 hours, across a restart or another instance', async () => {
    await o.store.claim('scope', 'k2', 'fp', T0);
    await o.store.complete('scope', 'k2', 'fp', ANSWER, T0);
    const other = await o.again();
    expect(await other.claim('scope', 'k2', 'fp', T0 + IDEMPOTENCY_TTL_MS - 1)).toMatchObject({ kind: 'done', answer: ANSWER });
    expect((await other.claim('scope', 'k2', 'fp', T0 + IDEMPOTENCY_TTL_MS)).kind).toBe('claimed');
  });

  it('frees a claim released by its owner only, and one whose lease ran out', async () => {
    const claim = await o.store.claim('scope', 'k3', 'fp', T0);
    await o.store.release('scope', 'k3', 'not-the-token');
    expect((await o.store.claim('scope', 'k3', 'fp', T0)).kind).toBe('pending');
    await o.store.release('scope', 'k3', (claim as { token: string }).token);
    expect((await o.store.claim('scope', 'k3', 'fp', T0)).kind).toBe('claimed');
    expect((await o.store.claim('scope', 'k3', 'fp', T0 + CLAIM_LEASE_MS)).kind).toBe('claimed');
  });
});

describe('embedded idempotency store files', () => {
  it('drops a line torn by a crash and keeps every whole one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idem-torn-'));
    try {
      const store = new EmbeddedIdempotencyStore(dir, () => T0);
      await store.claim('s', 'k', 'fp', T0);
      await store.complete('s', 'k', 'fp', ANSWER, T0);
      // A kill mid-write leaves part of a line after the last newline (close() would compact it away).
      const [journal] = readdirSync(dir).filter((name) => name.startsWith('journal-'));
      appendToFile(join(dir, journal!), '{"k":"s:other","r":{"state":"do');
      const reopened = new EmbeddedIdempotencyStore(dir, () => T0);
      expect(await reopened.claim('s', 'k', 'fp', T0)).toMatchObject({ kind: 'done', answer: ANSWER });
      expect((await reopened.claim('s', 'other', 'fp', T0)).kind).toBe('claimed');
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens the journal.ndjson of the previous version: every answer kept, a dropped one gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idem-v1-'));
    try {
      const done = (fingerprint: string) => ({ state: 'done', fingerprint, answer: ANSWER, expires_at: T0 + IDEMPOTENCY_TTL_MS });
      // As embedded.ts wrote it before lib/kv: one line per answer (r: null drops one).
      writeFileSync(join(dir, 'journal.ndjson'), [
        JSON.stringify({ k: 's:k1', r: done('fp1') }), JSON.stringify({ k: 's:k2', r: done('fp2') }), JSON.stringify({ k: 's:k2', r: null }), '',
      ].join('\n'));
      const store = new EmbeddedIdempotencyStore(dir, () => T0);
      expect(await store.claim('s', 'k1', 'other', T0)).toEqual({ kind: 'done', fingerprint: 'fp1', answer: ANSWER });
      expect((await store.claim('s', 'k2', 'fp2', T0)).kind).toBe('claimed');
      await store.close();
      expect(readdirSync(dir).sort()).toEqual(['journal-2.ndjson', 'snapshot.json']);
      const again = new EmbeddedIdempotencyStore(dir, () => T0);
      expect(await again.claim('s', 'k1', 'fp1', T0)).toMatchObject({ kind: 'done', answer: ANSWER });
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
