import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { killAfterAcks } from '../kv/testutil/killed-after-acks.ts';
import { EmbeddedPaymentStore } from './payments-embedded.ts';
import { PAYMENT_LEASE_MS, type PaymentRecord } from './payments.ts';

const NOW = Date.parse('2026-11-26T10:00:00.000Z');
const pending = (id: string, paidAt = '2026-11-26T09:59:00.000Z'): PaymentRecord => ({
  id, key_prefix: 'trk_test_Ab3dE9x', plan: 'growth', amount_paise: 99_900, currency: 'INR', status: 'captured', paid_at: paidAt,
  link_id: 'plink_1', reference_id: 'rn_x', gateway: 'sandbox', applied: false, reason: null, state: 'pending', lease_until: NOW + PAYMENT_LEASE_MS,
});

const dirs: string[] = [];
const dir = () => { const d = mkdtempSync(join(tmpdir(), 'payments-')); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

describe('embedded payment store', () => {
  it('claims a payment once; a live claim is in progress, a lapsed one is taken again, a settled one stays settled', async () => {
    const store = new EmbeddedPaymentStore(dir());
    expect(await store.claim(pending('pay_1'), NOW)).toEqual({ kind: 'claimed' });
    expect(await store.claim(pending('pay_1'), NOW + 1000)).toEqual({ kind: 'in_progress' });
    expect(await store.claim(pending('pay_1'), NOW + PAYMENT_LEASE_MS)).toEqual({ kind: 'claimed' });
    const settled: PaymentRecord = { ...pending('pay_1'), state: 'settled', applied: true, lease_until: 0 };
    await store.settle(settled);
    expect(await store.claim(pending('pay_1'), NOW + 10 * PAYMENT_LEASE_MS)).toEqual({ kind: 'settled', record: settled });
    await store.close();
  });

  it('keeps payments and attempts across a restart, newest payment first; an attempt keeps its first link', async () => {
    const d = dir();
    const first = new EmbeddedPaymentStore(d);
    await first.claim(pending('pay_old', '2026-11-01T00:00:00.000Z'), NOW);
    await first.settle({ ...pending('pay_new'), state: 'settled', applied: true, lease_until: 0 });
    const attempt = { reference_id: 'rn_1', link_id: 'plink_1', short_url: 'http://x/pay/plink_1', key_prefix: 'trk_test_Ab3dE9x', plan: 'growth' as const };
    expect(await first.saveAttempt(attempt)).toEqual(attempt);
    expect(await first.saveAttempt({ ...attempt, link_id: 'plink_2' })).toEqual(attempt);
    await first.close();

    const again = new EmbeddedPaymentStore(d);
    expect((await again.listByKey('trk_test_Ab3dE9x')).map((p) => [p.id, p.state])).toEqual([['pay_new', 'settled'], ['pay_old', 'pending']]);
    expect(await again.listByKey('trk_test_Other00')).toEqual([]);
    expect(await again.getAttempt('rn_1')).toEqual(attempt);
    expect(await again.getAttempt('rn_2')).toBeNull();
    await again.close();
  });

  it('opens the journal.ndjson of the previous version: every payment and attempt as it was', async () => {
    const d = dir();
    const settled: PaymentRecord = { ...pending('pay_1'), state: 'settled', applied: true, lease_until: 0 };
    const attempt = { reference_id: 'rn_1', link_id: 'plink_1', short_url: 'http://x/pay/plink_1', key_prefix: 'trk_test_Ab3dE9x', plan: 'growth' as const };
    // As payments-embedded.ts wrote it before lib/kv: one line per change, the last one torn by a crash.
    const lines = [JSON.stringify({ p: pending('pay_1') }), JSON.stringify({ a: attempt }), JSON.stringify({ p: settled }), '{"p":{"id":"pay_2"'];
    writeFileSync(join(d, 'journal.ndjson'), lines.join('\n'));
    const store = new EmbeddedPaymentStore(d);
    expect(await store.listByKey('trk_test_Ab3dE9x')).toEqual([settled]);
    expect(await store.claim(pending('pay_1'), NOW)).toEqual({ kind: 'settled', record: settled });
    expect(await store.getAttempt('rn_1')).toEqual(attempt);
    await store.close();
    expect(readdirSync(d).sort()).toEqual(['journal-1.ndjson', 'snapshot.json']);
    const again = new EmbeddedPaymentStore(d);
    expect(await again.listByKey('trk_test_Ab3dE9x')).toEqual([settled]);
    expect(await again.getAttempt('rn_1')).toEqual(attempt);
    await again.close();
  });

  it('resolves a claim, a settlement and an attempt only after an fsync, one fsync for the changes of one moment', async () => {
    const store = new EmbeddedPaymentStore(dir());
    expect(store.syncs).toBe(0);
    await store.claim(pending('pay_1'), NOW);
    expect(store.syncs).toBe(1);
    const settled = (id: string): PaymentRecord => ({ ...pending(id), state: 'settled', applied: true, lease_until: 0 });
    await Promise.all([store.settle(settled('pay_1')), store.settle(settled('pay_2')), store.settle(settled('pay_3'))]);
    expect(store.syncs).toBe(2);
    await store.saveAttempt({ reference_id: 'rn_1', link_id: 'plink_1', short_url: 'http://x/pay/plink_1', key_prefix: 'trk_test_Ab3dE9x', plan: 'growth' });
    expect(store.syncs).toBe(3);
    // Reads and a redelivery of a settled payment write nothing, so they fsync nothing.
    await store.claim(pending('pay_1'), NOW);
    await store.listByKey('trk_test_Ab3dE9x');
    expect(store.syncs).toBe(3);
    await store.close();
  });
});

describe('embedded payment store killed with SIGKILL right after acknowledging', () => {
  const CHILD = fileURLToPath(new URL('./testutil/durable-child.ts', import.meta.url));

  it('keeps every payment whose settle had resolved', { timeout: 60_000 }, async () => {
    const d = dir();
    const acked = await killAfterAcks(CHILD, [d], 40);
    const store = new EmbeddedPaymentStore(d);
    const kept = new Map((await store.listByKey('trk_live_Ab3dE9x')).map((p) => [p.id, p]));
    for (const id of acked) expect(kept.get(id)).toMatchObject({ id, state: 'settled', applied: true });
    await store.close();
  });
});
