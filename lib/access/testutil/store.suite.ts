/** Every behaviour of the access store, run against both implementations (Redis: the real one). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageRecordSchema } from '../../schemas/index.ts';
import { AccessError } from '../errors.ts';
import { hashKey, keyMode, keyPrefix } from '../key-format.ts';
import type { ConsumeResult } from '../limits.ts';
import { toUsageRecord, type CreateKeyInput, type KeyRecord } from '../record.ts';
import type { AccessStore } from '../store.ts';
import type { Harness, HarnessFactory } from './stores.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (offsetMs = 0) => new Date(T0 + offsetMs);
const iso = (s: string) => new Date(s);
/** Limits high enough not to interfere with the one a test is about. */
const roomy = { lookups_limit: 100_000, daily_quota: 100_000, burst_per_second: 10_000 };

function codes(results: ConsumeResult[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const r of results) {
    const code = r.ok ? 'ok' : r.code;
    tally[code] = (tally[code] ?? 0) + 1;
  }
  return tally;
}

/** The access store's contract, run on the embedded store by store.test.ts and on Redis by store.services.test.ts. */
export function accessStoreSuite(factory: HarnessFactory): void {
  describe(`${factory.name} access store`, () => {
    let h: Harness;
    let store: AccessStore;
    beforeEach(async () => {
      h = await factory.create();
      store = h.store;
    });
    afterEach(async () => {
      await h.dispose();
    });

    const create = (input: Partial<CreateKeyInput> = {}, now = at()) =>
      store.createKey({ plan: 'starter', mode: 'live', email: 'ops@example.in', ...input }, now);
    const usage = (r: KeyRecord, now = at()) => store.usage(r.prefix, now);
    /** `n` consumes one after another at the same instant. */
    const consumeN = async (r: KeyRecord, n: number, now = at()) => {
      const results: ConsumeResult[] = [];
      for (let i = 0; i < n; i++) results.push(await store.consume(r, now));
      return results;
    };

    describe('keys', () => {
      it('creates a key with the plan defaults and finds it by key and by prefix', async () => {
        const { key, record } = await create({ plan: 'trial', mode: 'test' });
        expect(keyMode(key)).toBe('test');
        expect(record).toMatchObject({
          prefix: keyPrefix(key), hash: hashKey(key), mode: 'test', plan: 'trial', status: 'active',
          period_start: '2026-11-21T10:00:00.000Z', period_end: '2026-12-05T10:00:00.000Z',
          lookups_limit: 100, daily_quota: 100, burst_per_second: 5, created_at: '2026-11-21T10:00:00.000Z', renewed_at: null,
        });
        expect(await store.getByKey(key)).toEqual(record);
        expect(await store.getByPrefix(record.prefix)).toEqual(record);
      });

      it('applies overrides for custom deals', async () => {
        const { record } = await create({
          plan: 'business', lookups_limit: 50_000, daily_quota: 5_000, burst_per_second: 40,
          period_start: '2026-11-01T00:00:00Z', period_end: '2027-11-01T00:00:00Z',
        });
        expect(record).toMatchObject({ plan: 'business', lookups_limit: 50_000, daily_quota: 5_000, burst_per_second: 40,
          period_start: '2026-11-01T00:00:00.000Z', period_end: '2027-11-01T00:00:00.000Z' });
        expect(await store.getByPrefix(record.prefix)).toEqual(record);
      });

      it('refuses invalid input and stores nothing', async () => {
        await expect(create({ email: 'nobody' })).rejects.toMatchObject({ code: 'bad_request' });
        await expect(create({ period_start: '2026-12-01T00:00:00Z', period_end: '2026-11-01T00:00:00Z' })).rejects.toBeInstanceOf(AccessError);
        expect(await store.list()).toEqual([]);
      });

      it('answers null for unknown and malformed keys', async () => {
        const { key } = await create();
        const other = `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
        expect(await store.getByKey(other)).toBeNull();
        expect(await store.getByKey(`${key}x`)).toBeNull();
        expect(await store.getByKey('')).toBeNull();
        expect(await store.getByPrefix('trk_live_0000000')).toBeNull();
      });

      it('never holds the plain key, only its SHA-256', async () => {
        const { key } = await create();
        await store.consume((await store.getByKey(key))!, at());
        const raw = await h.raw();
        expect(raw).toContain(hashKey(key));
        expect(raw).toContain(keyPrefix(key));
        expect(raw).not.toContain(key.slice(16));
      });

      it('lists every key, oldest first', async () => {
        const b = await create({ email: 'b@example.in' }, at(1000));
        const a = await create({ email: 'a@example.in' }, at(0));
        expect((await store.list()).map((r) => r.prefix)).toEqual([a.record.prefix, b.record.prefix]);
      });
    });

    describe('statuses', () => {
      it('suspends and resumes; a suspended key is refused as invalid and counts nothing', async () => {
        const { record } = await create();
        expect((await store.setStatus(record.prefix, 'suspended')).status).toBe('suspended');
        expect(await store.consume(record, at())).toEqual({ ok: false, code: 'invalid_api_key' });
        expect((await store.setStatus(record.prefix, 'active')).status).toBe('active');
        expect((await store.consume(record, at())).ok).toBe(true);
        expect(await usage(record)).toEqual({ lookupsUsed: 1, dailyUsed: 1 });
      });

      it('makes revocation final', async () => {
        const { key, record } = await create();
        expect((await store.setStatus(record.prefix, 'revoked')).status).toBe('revoked');
        await expect(store.setStatus(record.prefix, 'active')).rejects.toMatchObject({ code: 'conflict', reason: 'key_revoked' });
        await expect(store.setStatus(record.prefix, 'suspended')).rejects.toMatchObject({ reason: 'key_revoked' });
        await expect(store.renew(record.prefix, undefined, at())).rejects.toMatchObject({ reason: 'key_revoked' });
        expect((await store.setStatus(record.prefix, 'revoked')).status).toBe('revoked');
        expect((await store.getByKey(key))?.status).toBe('revoked');
        expect(await store.consume(record, at())).toEqual({ ok: false, code: 'invalid_api_key' });
      });

      it('answers not_found for unknown prefixes', async () => {
        for (const call of [
          () => store.setStatus('trk_live_0000000', 'suspended'), () => store.renew('trk_live_0000000', undefined, at()),
          () => store.usage('trk_live_0000000', at()), () => store.markNoticeSent('trk_live_0000000', 'three_day', at()),
        ]) await expect(call()).rejects.toMatchObject({ code: 'not_found', reason: 'key_not_found' });
      });
    });

    describe('periods', () => {
      it('refuses lookups from period_end on with payment_required, and still reports usage', async () => {
        const { record } = await create({ plan: 'trial' });
        await consumeN(record, 3, at());
        const end = Date.parse(record.period_end);
        expect((await store.consume(record, new Date(end - 1))).ok).toBe(true);
        expect(await store.consume(record, new Date(end))).toEqual({ ok: false, code: 'payment_required' });
        const used = await usage(record, new Date(end));
        expect(used.lookupsUsed).toBe(4);
        expect(toUsageRecord(record, used, new Date(end)).status).toBe('expired');
      });

      it('renews from now with counters at zero at once, and the new plan', async () => {
        const { record } = await create({ plan: 'trial' });
        await consumeN(record, 7, at());
        const later = new Date(record.period_end);
        const renewed = await store.renew(record.prefix, 'growth', later);
        expect(renewed).toMatchObject({ plan: 'growth', period_start: record.period_end, period_end: '2027-01-04T10:00:00.000Z',
          renewed_at: record.period_end, lookups_limit: 4000, daily_quota: 800, burst_per_second: 10 });
        expect(await usage(record, later)).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
        // The caller's copy of the key is from before the renewal: the stored key decides.
        const result = await store.consume(record, later);
        expect(result).toMatchObject({ ok: true, limits: { period: 4000, daily: 800, burst: 10 }, remaining: { period: 3999, daily: 799, burst: 9 } });
        expect(await usage(record, later)).toEqual({ lookupsUsed: 1, dailyUsed: 1 });
        expect(await store.getByPrefix(record.prefix)).toEqual(renewed);
      });

      it('keeps custom limits when renewed without a plan, and starts notices over', async () => {
        const { record } = await create({ lookups_limit: 7 });
        expect(await store.markNoticeSent(record.prefix, 'three_day', at())).toBe(true);
        expect(await store.markNoticeSent(record.prefix, 'three_day', at(5))).toBe(false);
        expect((await store.getByPrefix(record.prefix))?.notices_sent).toEqual({ three_day: '2026-11-21T10:00:00.000Z' });
        const renewed = await store.renew(record.prefix, undefined, at(1000));
        expect(renewed).toMatchObject({ plan: 'starter', lookups_limit: 7, notices_sent: {} });
        expect(await store.markNoticeSent(record.prefix, 'three_day', at(2000))).toBe(true);
      });

      it('renews for a payment once per payment id, the id kept with the key across a restart', async () => {
        const { record } = await create({ plan: 'starter' });
        await consumeN(record, 3, at());
        const toGrowth = (r: KeyRecord) => ({ ...r, plan: 'growth' as const, period_start: at(1000).toISOString(), renewed_at: at(1000).toISOString() });
        const first = await store.renewForPayment(record.prefix, 'pay_once0000001', toGrowth);
        expect(first).toEqual({ outcome: 'renewed', record: { ...record, plan: 'growth', period_start: at(1000).toISOString(), renewed_at: at(1000).toISOString() } });
        expect(await usage(record, at(1000))).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
        await consumeN(record, 2, at(2000));

        store = await h.reopen();
        // The same payment again, after a restart: nothing decided, nothing written.
        let asked = 0;
        const again = await store.renewForPayment(record.prefix, 'pay_once0000001', (r) => { asked++; return toGrowth(r); });
        expect(again).toEqual({ outcome: 'already_applied', record: first.record });
        expect(asked).toBe(0);
        expect(await usage(record, at(2000))).toEqual({ lookupsUsed: 2, dailyUsed: 2 });
        // Another payment of the same key renews; a refusal writes nothing.
        expect((await store.renewForPayment(record.prefix, 'pay_once0000002', (r) => ({ ...r, period_start: at(3000).toISOString() }))).outcome).toBe('renewed');
        const refused = await store.renewForPayment(record.prefix, 'pay_once0000003', () => null);
        expect(refused.outcome).toBe('refused');
        expect(await store.getByPrefix(record.prefix)).toEqual(refused.record);
        await expect(store.renewForPayment('trk_live_0000000', 'pay_once0000004', toGrowth)).rejects.toMatchObject({ reason: 'key_not_found' });
      });

      it('gives the usage record of the spec', async () => {
        const { record } = await create({ plan: 'growth' });
        await consumeN(record, 2, at());
        const current = (await store.getByPrefix(record.prefix))!;
        const body = toUsageRecord(current, await usage(current), at());
        expect(UsageRecordSchema.parse(body)).toEqual({
          key_prefix: record.prefix, plan: 'growth', status: 'active',
          period: { start: '2026-11-21T10:00:00.000Z', end: '2026-12-21T10:00:00.000Z', lookups_used: 2, lookups_limit: 4000, lookups_remaining: 3998 },
          rate_limits: { burst_per_second: 10, daily_quota: 800 },
        });
      });
    });

    describe('limits', () => {
      it('allows burst_per_second lookups in one second, then rate_limit_exceeded with Retry-After 1', async () => {
        const { record } = await create({ plan: 'trial' });
        const results = await consumeN(record, 5, at(100));
        expect(results.map((r) => r.ok && r.remaining.burst)).toEqual([4, 3, 2, 1, 0]);
        expect(results[0]).toMatchObject({ ok: true, limits: { burst: 5, daily: 100, period: 100 }, burstResetSeconds: 1,
          ticket: { prefix: record.prefix, periodStart: record.period_start, day: '2026-11-21' } });
        expect(await store.consume(record, at(999))).toMatchObject({ ok: false, code: 'rate_limit_exceeded', retryAfterSeconds: 1,
          remaining: { burst: 0, daily: 95, period: 95 } });
        expect((await store.consume(record, at(1000))).ok).toBe(true);
      });

      it('allows daily_quota lookups per UTC day; Retry-After runs to 00:00 UTC, when it resets', async () => {
        const { record } = await create({ ...roomy, daily_quota: 3 });
        const evening = iso('2026-11-21T23:00:00.000Z');
        expect(codes(await consumeN(record, 3, evening))).toEqual({ ok: 3 });
        expect(await store.consume(record, evening)).toMatchObject({ ok: false, code: 'daily_quota_exceeded', retryAfterSeconds: 3600 });
        expect(await store.consume(record, iso('2026-11-21T23:59:59.999Z'))).toMatchObject({ code: 'daily_quota_exceeded', retryAfterSeconds: 1 });
        const midnight = iso('2026-11-22T00:00:00.000Z');
        expect(await store.consume(record, midnight)).toMatchObject({ ok: true, remaining: { daily: 2 } });
        expect(await usage(record, midnight)).toEqual({ lookupsUsed: 4, dailyUsed: 1 });
      });

      it('refuses beyond lookups_limit with plan_quota_exceeded and no Retry-After', async () => {
        const { record } = await create({ ...roomy, lookups_limit: 3 });
        expect(codes(await consumeN(record, 3))).toEqual({ ok: 3 });
        const refused = await store.consume(record, at(5000));
        expect(refused).toMatchObject({ ok: false, code: 'plan_quota_exceeded', remaining: { period: 0 } });
        expect(refused).not.toHaveProperty('retryAfterSeconds');
        expect(toUsageRecord(record, await usage(record), at()).period).toMatchObject({ lookups_used: 3, lookups_remaining: 0 });
      });

      it('counts nothing for a refused lookup, whichever limit refused it', async () => {
        const { record } = await create({ lookups_limit: 5, daily_quota: 3, burst_per_second: 2 });
        // Burst refusals in second 0 eat neither the day nor the period...
        expect(codes(await consumeN(record, 10, at(0)))).toEqual({ ok: 2, rate_limit_exceeded: 8 });
        expect(await usage(record)).toEqual({ lookupsUsed: 2, dailyUsed: 2 });
        // ...so the third lookup of the day still passes; daily refusals then eat no burst slot.
        expect(codes(await consumeN(record, 4, at(1000)))).toEqual({ ok: 1, daily_quota_exceeded: 3 });
        const refusal = await store.consume(record, at(1000));
        expect(refusal).toMatchObject({ code: 'daily_quota_exceeded', remaining: { burst: 1, daily: 0, period: 2 } });
        // Next day: two left in the period; plan refusals eat neither burst nor day.
        const tomorrow = iso('2026-11-22T10:00:00.000Z');
        expect(codes(await consumeN(record, 2, tomorrow))).toEqual({ ok: 2 });
        const next = new Date(tomorrow.getTime() + 1000);
        expect(codes(await consumeN(record, 5, next))).toEqual({ plan_quota_exceeded: 5 });
        expect(await store.consume(record, next)).toMatchObject({ remaining: { burst: 2, daily: 1, period: 0 } });
        expect(await usage(record, next)).toEqual({ lookupsUsed: 5, dailyUsed: 2 });
      });
    });

    describe('authorize (a lookup\'s access step)', () => {
      it('reads the record and counts only when asked', async () => {
        const { key, record } = await create(roomy);
        expect(await store.authorize(key, at(), false)).toEqual({ record, consumed: null });
        expect(await usage(record)).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
        const counted = await store.authorize(key, at(), true);
        expect(counted.record).toEqual(record);
        expect(counted.consumed).toMatchObject({ ok: true, remaining: { period: roomy.lookups_limit - 1 } });
        expect(await usage(record)).toEqual({ lookupsUsed: 1, dailyUsed: 1 });
      });

      it('answers no record for unknown and malformed keys, counting nothing', async () => {
        expect(await store.authorize('trk_live_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ', at(), true)).toEqual({ record: null, consumed: null });
        expect(await store.authorize('trk_live_short', at(), true)).toEqual({ record: null, consumed: null });
      });

      it('returns a suspended or expired key\'s record with the refusal, counting nothing', async () => {
        const { key, record } = await create(roomy);
        await store.setStatus(record.prefix, 'suspended');
        const suspended = await store.authorize(key, at(), true);
        expect(suspended).toMatchObject({ record: { status: 'suspended' }, consumed: { ok: false, code: 'invalid_api_key' } });
        await store.setStatus(record.prefix, 'active');
        const afterPeriod = new Date(Date.parse(record.period_end) + 1);
        expect(await store.authorize(key, afterPeriod, true)).toMatchObject({ record: { prefix: record.prefix }, consumed: { ok: false, code: 'payment_required' } });
        expect(await usage(record)).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
      });

      it('sees a change made since the last read (the record is not served stale)', async () => {
        const { key, record } = await create(roomy);
        expect((await store.authorize(key, at(), false)).record?.status).toBe('active');
        await store.setStatus(record.prefix, 'suspended');
        expect((await store.authorize(key, at(), false)).record?.status).toBe('suspended');
        const renewed = await store.renew(record.prefix, 'growth', at(60_000));
        expect((await store.authorize(key, at(60_000), false)).record).toEqual(renewed);
      });
    });

    describe('refund', () => {
      it('gives a lookup back to the period and the day', async () => {
        const { record } = await create({ ...roomy, lookups_limit: 1 });
        const granted = await store.consume(record, at());
        if (!granted.ok) throw new Error('expected a granted lookup');
        expect((await store.consume(record, at(1))).ok).toBe(false);
        await store.refund(granted.ticket);
        expect(await usage(record)).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
        expect((await store.consume(record, at(2))).ok).toBe(true);
      });

      it('takes back from the windows it was counted in, after midnight or a renewal too', async () => {
        const { record } = await create(roomy);
        const late = await store.consume(record, iso('2026-11-21T23:59:59.900Z'));
        const early = iso('2026-11-22T00:00:00.100Z');
        await store.consume(record, early);
        if (!late.ok) throw new Error('expected a granted lookup');
        await store.refund(late.ticket);
        expect(await usage(record, early)).toEqual({ lookupsUsed: 1, dailyUsed: 1 });

        const before = await store.consume(record, early);
        if (!before.ok) throw new Error('expected a granted lookup');
        await store.renew(record.prefix, undefined, early);
        await store.consume(record, early);
        await store.refund(before.ticket);
        expect(await usage(record, early)).toEqual({ lookupsUsed: 1, dailyUsed: 1 });
      });

      it('never takes counters below zero', async () => {
        const { record } = await create(roomy);
        const granted = await store.consume(record, at());
        if (!granted.ok) throw new Error('expected a granted lookup');
        await store.refund(granted.ticket);
        await store.refund(granted.ticket);
        expect(await usage(record)).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
      });
    });

    describe('trials', () => {
      it('issues one trial per e-mail, compared case-insensitively', async () => {
        const first = await store.issueTrial({ email: 'Asha@Example.in', mode: 'live' }, at());
        expect(first.record).toMatchObject({ plan: 'trial', lookups_limit: 100, email: 'Asha@Example.in' });
        await expect(store.issueTrial({ email: ' asha@example.IN ', mode: 'test' }, at())).rejects.toMatchObject({ code: 'conflict', reason: 'trial_exists' });
        expect((await store.findTrialByEmail('ASHA@example.in'))?.prefix).toBe(first.record.prefix);
        expect(await store.findTrialByEmail('ravi@example.in')).toBeNull();
        expect((await store.issueTrial({ email: 'ravi@example.in', mode: 'live' }, at())).record.plan).toBe('trial');
      });

      it('counts plus-addressed and Gmail-dotted spellings of one mailbox as one e-mail (finding 9)', async () => {
        const first = await store.issueTrial({ email: 'asha.rao@gmail.com', mode: 'live' }, at());
        for (const variant of ['asharao@gmail.com', 'Asha.Rao+trial@gmail.com', 'a.s.h.a.r.a.o+x@googlemail.com', 'asharao+1@GMAIL.COM']) {
          await expect(store.issueTrial({ email: variant, mode: 'live' }, at()), variant).rejects.toMatchObject({ reason: 'trial_exists' });
          expect((await store.findTrialByEmail(variant))?.prefix).toBe(first.record.prefix);
        }
        await store.issueTrial({ email: 'ravi+work@example.in', mode: 'live' }, at());
        await expect(store.issueTrial({ email: 'ravi+home@example.in', mode: 'live' }, at())).rejects.toMatchObject({ reason: 'trial_exists' });
        // Dots matter outside Gmail: another mailbox.
        expect((await store.issueTrial({ email: 'r.avi@example.in', mode: 'live' }, at())).record.plan).toBe('trial');
      });

      it('lets operators issue trials regardless, without changing which trial was first', async () => {
        const first = await store.issueTrial({ email: 'asha@example.in', mode: 'live' }, at());
        const operator = await create({ plan: 'trial', email: 'asha@example.in' });
        expect(operator.record.plan).toBe('trial');
        expect((await store.findTrialByEmail('asha@example.in'))?.prefix).toBe(first.record.prefix);
      });

      it('issues exactly one trial to many concurrent requests for one e-mail', async () => {
        const settled = await Promise.allSettled(Array.from({ length: 20 }, () => store.issueTrial({ email: 'rush@example.in', mode: 'live' }, at())));
        expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
        expect((await store.list()).filter((r) => r.email === 'rush@example.in')).toHaveLength(1);
      });
    });

    describe('persistence', () => {
      it('keeps keys, statuses, counters and the trial index across a re-open', async () => {
        const { key, record } = await create(roomy);
        const trial = await store.issueTrial({ email: 'asha@example.in', mode: 'test' }, at());
        await consumeN(record, 4, at());
        await store.setStatus(trial.record.prefix, 'suspended');
        await store.markNoticeSent(record.prefix, 'last_day', at());
        const before = await store.list();

        store = await h.reopen();
        expect(await store.list()).toEqual(before);
        expect(await store.getByKey(key)).toEqual(before.find((r) => r.prefix === record.prefix));
        expect(await usage(record)).toEqual({ lookupsUsed: 4, dailyUsed: 4 });
        expect((await store.findTrialByEmail('asha@example.in'))?.status).toBe('suspended');
        expect((await store.consume(record, at())).ok).toBe(true);
        expect(await usage(record)).toEqual({ lookupsUsed: 5, dailyUsed: 5 });
      });
    });

    describe('exact under concurrency', () => {
      it('serves exactly the 50 lookups left to 500 parallel requests', async () => {
        const { record } = await create({ ...roomy, lookups_limit: 60 });
        expect(codes(await consumeN(record, 10))).toEqual({ ok: 10 });
        const results = await Promise.all(Array.from({ length: 500 }, (_, i) => store.consume(record, at(1 + (i % 900)))));
        expect(codes(results)).toEqual({ ok: 50, plan_quota_exceeded: 450 });
        const period = toUsageRecord(record, await usage(record), at()).period;
        expect(period).toMatchObject({ lookups_used: 60, lookups_limit: 60, lookups_remaining: 0 });
      });

      it('serves exactly burst_per_second of 500 parallel requests in one second', async () => {
        const { record } = await create({ ...roomy, burst_per_second: 20 });
        const results = await Promise.all(Array.from({ length: 500 }, () => store.consume(record, at(250))));
        expect(codes(results)).toEqual({ ok: 20, rate_limit_exceeded: 480 });
        expect(await usage(record)).toEqual({ lookupsUsed: 20, dailyUsed: 20 });
      });

      it('serves exactly daily_quota of 500 parallel requests in one day', async () => {
        const { record } = await create({ ...roomy, daily_quota: 30 });
        const results = await Promise.all(Array.from({ length: 500 }, (_, i) => store.consume(record, at(i * 37))));
        expect(codes(results)).toEqual({ ok: 30, daily_quota_exceeded: 470 });
        expect(await usage(record)).toEqual({ lookupsUsed: 30, dailyUsed: 30 });
      });

      it('gives concurrent lookups of one key the answers they would get one after another', async () => {
        const { key, record } = await create({ ...roomy, lookups_limit: 5, burst_per_second: 3 });
        const first = await Promise.all(Array.from({ length: 6 }, () => store.authorize(key, at(100), true)));
        const consumed = first.map((a) => a.consumed!);
        // Three pass the burst limit (remaining 2, 1, 0 in turn); the burst limit, checked first, refuses the rest.
        expect(consumed.map((c) => (c.ok ? 'ok' : c.code))).toEqual(['ok', 'ok', 'ok', 'rate_limit_exceeded', 'rate_limit_exceeded', 'rate_limit_exceeded']);
        expect(consumed.map((c) => ('remaining' in c ? c.remaining.burst : null))).toEqual([2, 1, 0, 0, 0, 0]);
        expect(consumed.map((c) => ('remaining' in c ? c.remaining.period : null))).toEqual([4, 3, 2, 2, 2, 2]);
        // The next second: two left in the period, then the plan quota refuses.
        const second = await Promise.all(Array.from({ length: 4 }, () => store.authorize(key, at(1_100), true)));
        expect(second.map((a) => (a.consumed!.ok ? 'ok' : a.consumed!.code))).toEqual(['ok', 'ok', 'plan_quota_exceeded', 'plan_quota_exceeded']);
        expect(await usage(record)).toEqual({ lookupsUsed: 5, dailyUsed: 5 });
      });

      it('answers concurrent lookups of many keys each by its own key', async () => {
        const a = await create({ ...roomy, lookups_limit: 2 });
        const b = await create({ ...roomy, burst_per_second: 1 });
        const suspended = await create(roomy);
        await store.setStatus(suspended.record.prefix, 'suspended');
        const asks: [string, number, boolean][] = [
          [a.key, 100, true], [b.key, 100, true], [a.key, 100, false], [a.key, 100, true], [b.key, 100, true],
          ['trk_live_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ', 100, true], [a.key, 100, true], [suspended.key, 100, true], [b.key, 1_100, true],
        ];
        const answers = await Promise.all(asks.map(([key, offset, count]) => store.authorize(key, at(offset), count)));
        expect(answers.map((x) => x.record?.prefix ?? null)).toEqual([
          a.record.prefix, b.record.prefix, a.record.prefix, a.record.prefix, b.record.prefix, null, a.record.prefix, suspended.record.prefix, b.record.prefix,
        ]);
        expect(answers.map((x) => (x.consumed === null ? null : x.consumed.ok ? 'ok' : x.consumed.code))).toEqual([
          'ok', 'ok', null, 'ok', 'rate_limit_exceeded', null, 'plan_quota_exceeded', 'invalid_api_key', 'ok',
        ]);
        expect(await usage(a.record)).toEqual({ lookupsUsed: 2, dailyUsed: 2 });
        expect(await usage(b.record)).toEqual({ lookupsUsed: 2, dailyUsed: 2 });
        expect(await usage(suspended.record)).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
      });

      it('refuses only the concurrent lookups made from period_end on', async () => {
        // The period ends mid-second, so these lookups share their second (and a Redis batch).
        const { key, record } = await create(roomy, at(500));
        const end = Date.parse(record.period_end);
        const times = [-3, 2, -1, 0, -2].map((offset) => new Date(end + offset));
        const answers = await Promise.all(times.map((now) => store.authorize(key, now, true)));
        expect(answers.map((a) => (a.consumed!.ok ? 'ok' : a.consumed!.code))).toEqual(['ok', 'payment_required', 'ok', 'payment_required', 'ok']);
        expect(await usage(record, new Date(end - 1))).toEqual({ lookupsUsed: 3, dailyUsed: 3 });
      });

      it('keeps the counters exact when consumes and refunds interleave', async () => {
        const { record } = await create({ ...roomy, lookups_limit: 40 });
        const results = await Promise.all(Array.from({ length: 200 }, async () => {
          const r = await store.consume(record, at());
          // Every third granted lookup turns out to be a 502 and is given back.
          if (r.ok && r.remaining.period % 3 === 0) await store.refund(r.ticket);
          return r;
        }));
        const used = (await usage(record)).lookupsUsed;
        expect(used).toBeLessThanOrEqual(40);
        const granted = results.filter((r) => r.ok).length;
        const refunded = results.filter((r) => r.ok && r.remaining.period % 3 === 0).length;
        expect(used).toBe(granted - refunded);
      });
    });
  });
}
