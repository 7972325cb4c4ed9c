/** `authorizeBatch` (POST /v1/track/batch's access step), run on the embedded store by batch.test.ts and on one Redis and the Redis Cluster by batch.services.test.ts. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BatchConsumeResult, BatchGranted } from '../limits.ts';
import type { CreateKeyInput } from '../record.ts';
import type { AccessStore } from '../store.ts';
import type { Harness, HarnessFactory } from './stores.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (offsetMs = 0) => new Date(T0 + offsetMs);

function granted(result: BatchConsumeResult | null): BatchGranted {
  expect(result?.ok, JSON.stringify(result)).toBe(true);
  return result as BatchGranted;
}

export function accessBatchSuite(factory: HarnessFactory): void {
  describe(`${factory.name} access store: batches`, () => {
  let h: Harness;
  let store: AccessStore;
  beforeEach(async () => {
    h = await factory.create();
    store = h.store;
  });
  afterEach(async () => {
    await h.dispose();
  });

  const create = async (input: Partial<CreateKeyInput> = {}) =>
    store.createKey({ plan: 'starter', mode: 'test', email: 'ops@example.in', lookups_limit: 1000, daily_quota: 1000, burst_per_second: 100, ...input }, at());

  it('counts n lookups for the quotas and one request for the burst', async () => {
    const { key, record } = await create({ burst_per_second: 2 });
    const first = granted((await store.authorizeBatch(key, at(), 10)).consumed);
    expect(first).toMatchObject({ granted: 10, refused: null, remaining: { burst: 1, daily: 990, period: 990 } });
    expect(granted((await store.authorizeBatch(key, at(1), 10)).consumed).granted).toBe(10);
    // The third batch in the same second: refused whole by the burst limit, nothing counted.
    const third = (await store.authorizeBatch(key, at(2), 10)).consumed;
    expect(third).toMatchObject({ ok: false, code: 'rate_limit_exceeded', retryAfterSeconds: 1 });
    expect(await store.usage(record.prefix, at(2))).toEqual({ lookupsUsed: 20, dailyUsed: 20 });
    // A new second: room again.
    expect(granted((await store.authorizeBatch(key, at(1000), 1)).consumed).granted).toBe(1);
  });

  it('grants what the period leaves and names the plan quota for the rest (20 left, 50 asked)', async () => {
    const { key, record } = await create({ lookups_limit: 20 });
    const result = granted((await store.authorizeBatch(key, at(), 50)).consumed);
    expect(result.granted).toBe(20);
    expect(result.refused).toMatchObject({ ok: false, code: 'plan_quota_exceeded' });
    expect(result.refused?.retryAfterSeconds).toBeUndefined();
    expect(result.remaining.period).toBe(0);
    expect((await store.usage(record.prefix, at())).lookupsUsed).toBe(20);
    // Nothing left: every lookup of the next batch is refused, the batch itself still answered.
    const next = granted((await store.authorizeBatch(key, at(2000), 5)).consumed);
    expect(next).toMatchObject({ granted: 0, refused: { code: 'plan_quota_exceeded' } });
  });

  it('names the daily quota, with seconds to midnight, when the day runs out first', async () => {
    const { key } = await create({ daily_quota: 7 });
    const result = granted((await store.authorizeBatch(key, at(), 10)).consumed);
    expect(result.granted).toBe(7);
    expect(result.refused).toMatchObject({ code: 'daily_quota_exceeded', retryAfterSeconds: 14 * 3600 });
  });

  it('serves exactly the remaining lookups to 300 concurrent batches of 10 (50 left)', async () => {
    const { key, record } = await create({ lookups_limit: 50, daily_quota: 10_000, burst_per_second: 10_000 });
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => store.authorizeBatch(key, at(i % 500), 10)));
    const total = results.reduce((sum, r) => sum + granted(r.consumed).granted, 0);
    expect(total).toBe(50);
    expect((await store.usage(record.prefix, at())).lookupsUsed).toBe(50);
  });

  it('refuses unknown, suspended and expired keys, counting nothing', async () => {
    expect(await store.authorizeBatch('trk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', at(), 3)).toEqual({ record: null, consumed: null });
    const suspended = await create();
    await store.setStatus(suspended.record.prefix, 'suspended');
    expect((await store.authorizeBatch(suspended.key, at(), 3)).consumed).toEqual({ ok: false, code: 'invalid_api_key' });
    const expired = await create({ period_start: '2026-10-01T00:00:00.000Z', period_end: '2026-11-01T00:00:00.000Z' });
    expect((await store.authorizeBatch(expired.key, at(), 3)).consumed).toEqual({ ok: false, code: 'payment_required' });
    expect((await store.usage(suspended.record.prefix, at())).lookupsUsed).toBe(0);
  });

  it('refuses a key whose period starts later, counting nothing until it starts', async () => {
    const later = await create({ period_start: '2026-11-23T00:00:00.000Z', period_end: '2026-12-23T00:00:00.000Z' });
    expect((await store.authorizeBatch(later.key, at(), 3)).consumed).toEqual({ ok: false, code: 'payment_required' });
    expect((await store.usage(later.record.prefix, at())).lookupsUsed).toBe(0);
    const started = new Date('2026-11-23T00:00:01.000Z');
    expect(granted((await store.authorizeBatch(later.key, started, 3)).consumed).granted).toBe(3);
    expect((await store.usage(later.record.prefix, started)).lookupsUsed).toBe(3);
  });

  it('gives back refunded items one by one, and keeps the count across a restart', async () => {
    const { key, record } = await create();
    const result = granted((await store.authorizeBatch(key, at(), 5)).consumed);
    await store.refund(result.ticket);
    await store.refund(result.ticket);
    store = await h.reopen();
    expect(await store.usage(record.prefix, at())).toEqual({ lookupsUsed: 3, dailyUsed: 3 });
  });
  });
}
