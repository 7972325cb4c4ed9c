/** The embedded store's durability: answers are fsynced before `complete` resolves. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { killAfterAcks } from '../kv/testutil/killed-after-acks.ts';
import { EmbeddedIdempotencyStore } from './embedded.ts';

const T0 = Date.parse('2026-11-28T05:00:00.000Z');
const ANSWER = { status: 200, body: '{"results":[]}' };

const dirs: string[] = [];
const dir = () => { const d = mkdtempSync(join(tmpdir(), 'idem-durable-')); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

describe('embedded idempotency store durability', () => {
  it('resolves complete only after an fsync, one fsync for the answers of one moment; claims fsync nothing', async () => {
    const store = new EmbeddedIdempotencyStore(dir(), () => T0);
    for (const key of ['a', 'b', 'c']) expect((await store.claim('s', key, 'fp', T0)).kind).toBe('claimed');
    expect(store.syncs).toBe(0);
    await Promise.all(['a', 'b', 'c'].map((key) => store.complete('s', key, 'fp', ANSWER, T0)));
    expect(store.syncs).toBe(1);
    await store.complete('s', 'd', 'fp', ANSWER, T0);
    expect(store.syncs).toBe(2);
    // A replay of a stored answer writes nothing.
    expect(await store.claim('s', 'a', 'fp', T0)).toMatchObject({ kind: 'done', answer: ANSWER });
    expect(store.syncs).toBe(2);
    await store.close();
  });
});

describe('embedded idempotency store killed with SIGKILL right after acknowledging', () => {
  const CHILD = fileURLToPath(new URL('./testutil/durable-child.ts', import.meta.url));

  it('replays every answer whose complete had resolved', { timeout: 60_000 }, async () => {
    const d = dir();
    const acked = await killAfterAcks(CHILD, [d], 40);
    const store = new EmbeddedIdempotencyStore(d, () => T0);
    for (const key of acked) {
      expect(await store.claim('scope', key, `fp-${key}`, T0)).toEqual({ kind: 'done', fingerprint: `fp-${key}`, answer: { status: 200, body: `{"key":"${key}"}` } });
    }
    await store.close();
  });
});
