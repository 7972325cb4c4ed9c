import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { plans } from '../access/testutil/stores.ts';
import type { PaymentRecord } from '../billing/index.ts';
import { DAY_MS, HOUR_MS } from '../time/index.ts';
import { openBackend } from './backend.ts';

/**
 * A DATA_DIR as the stores wrote it before lib/kv (commit 6b42a77): a script made a paid test key
 * (3 lookups, renewed for payment pay_1) and a suspended trial key, push documents (some compacted
 * into push/snapshot.json, the rest in push/journal.ndjson), payments (pay_1 settled, pay_2 claimed,
 * link attempt rn_1), an Idempotency-Key answer and a trial attempt, all at T0, then SIGKILLed itself.
 */
const FIXTURE = fileURLToPath(new URL('./fixtures/previous-data-dir', import.meta.url));
const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const PAID_KEY = 'trk_test_i8fx4sg5vTzIQXrZqOv1OA6PKd2QNtSC';
const PAID = 'trk_test_i8fx4sg';
const TRIAL = 'trk_test_0GJA9ZQ';
const HASH = '2183d7dd9dfb818a9fb2139c9e2ae2948cbb8be9e842d0a2086dfb81217e3775';

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('embedded backend', () => {
  it('opens a DATA_DIR of the previous version with every key, count, payment, answer, push document and attempt, then again in the new layout', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'backend-v1-'));
    cpSync(FIXTURE, dataDir, { recursive: true });
    const now = T0 + HOUR_MS;
    const pay1: PaymentRecord = {
      id: 'pay_1', key_prefix: PAID, plan: 'growth', amount_paise: 99_900, currency: 'INR', status: 'captured', paid_at: new Date(T0).toISOString(),
      link_id: 'plink_1', reference_id: 'rn_1', gateway: 'sandbox', applied: false, reason: null, state: 'pending', lease_until: now + 300_000,
    };
    // The first open reads the previous files and writes the new ones; the second reads those.
    for (const round of ['previous files', 'new layout']) {
      const backend = openBackend({ redisUrl: undefined, namespace: 'trk:', dataDir, clock: () => now });
      expect(backend.kind, round).toBe('embedded');

      const access = backend.access(plans);
      expect((await access.getByKey(PAID_KEY))?.prefix, round).toBe(PAID);
      expect(await access.usage(PAID, new Date(T0))).toEqual({ lookupsUsed: 3, dailyUsed: 3 });
      expect((await access.getByPrefix(TRIAL))?.status).toBe('suspended');
      expect((await access.renewForPayment(PAID, 'pay_1', () => null)).outcome).toBe('already_applied');

      const payments = backend.payments();
      expect((await payments.listByKey(PAID)).map((p) => [p.id, p.state])).toEqual([['pay_2', 'pending'], ['pay_1', 'settled']]);
      expect(await payments.claim(pay1, now)).toMatchObject({ kind: 'settled', record: { applied: true } });
      expect(await payments.getAttempt('rn_1')).toMatchObject({ link_id: 'plink_1', key_prefix: PAID });

      const idempotency = backend.idempotency();
      expect(await idempotency.claim(HASH, 'batch-1', 'fp-1', now)).toEqual({
        kind: 'done', fingerprint: 'fp-1', answer: { status: 200, body: '{"results":[]}', headers: { 'ratelimit-limit': '10' } },
      });
      // Claimed but never answered when the process died: free again.
      expect((await idempotency.claim(HASH, 'batch-2', 'fp-2', now)).kind).toBe('claimed');

      const kv = backend.kv('push');
      expect(await kv.getMany([`{${PAID}}endpoint:1`, `{${PAID}}watch:a`])).toEqual([{ url: 'https://example.in/hook' }, { awb: 'A1' }]);
      expect(await kv.setMembers(`{${PAID}}endpoints`)).toEqual(['1']);
      expect(await kv.setMembers(`{${PAID}}watches`)).toEqual(['a']);
      expect(await kv.listRange(`{${PAID}}attempts`, 10)).toEqual([{ n: 2 }, { n: 1 }]);
      expect(await kv.nextDue('due')).toBe(T0 + 60_000);

      const throttle = backend.throttle();
      expect(await throttle.check({ name: 'trial', limit: 1, windowMs: DAY_MS }, '203.0.113.7', now)).toMatchObject({ blocked: true });

      for (const store of [access, payments, idempotency, kv, throttle]) await store.close();
      await backend.close();
    }
    // Each store in its directory under DATA_DIR, as before; the journals of the previous layout gone.
    expect(readdirSync(dataDir).sort()).toEqual(['access', 'idempotency', 'payments', 'push', 'throttle']);
    for (const store of ['access', 'idempotency', 'payments', 'push']) {
      expect(readdirSync(join(dataDir, store)).map((f) => f.replace(/-\d+\./, '-<g>.')).sort()).toEqual(['journal-<g>.ndjson', 'snapshot.json']);
    }
    expect(readdirSync(join(dataDir, 'throttle'))).toEqual(['attempts.json']);
  });
});
