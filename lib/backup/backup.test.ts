/**
 * `cli backup`'s copy, taken while the stores are open and written to (the running service), is a
 * DATA_DIR the stores open again with what they held.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedAccessStore, embeddedAccessDir } from '../access/index.ts';
import { plans } from '../access/testutil/stores.ts';
import { EmbeddedPaymentStore, embeddedPaymentsDir, type PaymentRecord } from '../billing/index.ts';
import { EmbeddedIdempotencyStore, embeddedIdempotencyDir } from '../idempotency/index.ts';
import { EmbeddedKv } from '../kv/index.ts';
import { EmbeddedThrottle } from '../throttle/index.ts';
import { backupDataDir, copyWholeLines } from './backup.ts';

const NOW = Date.parse('2026-11-28T05:00:00.000Z');
const payment = (id: string): PaymentRecord => ({
  id, key_prefix: 'trk_live_Ab3dE9x', plan: 'growth', amount_paise: 99_900, currency: 'INR', status: 'captured', paid_at: '2026-11-28T04:59:00.000Z',
  link_id: 'plink_1', reference_id: null, gateway: 'sandbox', applied: true, reason: null, state: 'settled', lease_until: 0,
});
const RULE = { name: 'trial', limit: 1, windowMs: 3_600_000 };

let root: string;
let dataDir: string;
let backup: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'backup-'));
  dataDir = join(root, 'data');
  backup = join(root, 'backup');
  mkdirSync(dataDir);
});
afterEach(() => { rmSync(root, { recursive: true, force: true }); });

describe('backup of DATA_DIR', () => {
  it('copies every store of a running service so that each opens with what it held; torn last lines are left out', async () => {
    const access = new EmbeddedAccessStore({ plans, dir: embeddedAccessDir(dataDir) });
    const payments = new EmbeddedPaymentStore(embeddedPaymentsDir(dataDir));
    const idempotency = new EmbeddedIdempotencyStore(embeddedIdempotencyDir(dataDir), () => NOW);
    const push = new EmbeddedKv(join(dataDir, 'push'), () => NOW);
    const throttle = new EmbeddedThrottle(dataDir);
    const { key, record } = await access.createKey({ plan: 'growth', mode: 'live', email: 'ops@example.in' }, new Date(NOW));
    for (let i = 0; i < 3; i++) await access.consume(record, new Date(NOW + i * 1000));
    await payments.claim({ ...payment('pay_1'), state: 'pending', applied: false, lease_until: NOW + 60_000 }, NOW);
    await payments.settle(payment('pay_1'));
    await idempotency.claim('scope', 'k1', 'fp', NOW);
    await idempotency.complete('scope', 'k1', 'fp', { status: 200, body: '{}' }, NOW);
    await push.set('{e}endpoint', { url: 'https://example.in/hook' });
    await push.schedule('{e}queue', 'evt_1', NOW + 5_000);
    await throttle.record(RULE, '203.0.113.7', NOW);
    writeFileSync(join(dataDir, 'polls.ndjson'), '{"poll":1}\n{"poll":2}\n{"poll":');
    writeFileSync(join(dataDir, 'admin-token'), 'token-0123456789abcdef\n');
    mkdirSync(join(dataDir, 'records'));
    writeFileSync(join(dataDir, 'records', 'x.json'), '{}');
    mkdirSync(join(dataDir, 'mystery'));
    // A write cut in the middle while the copy runs: half a line at the end of the push journal.
    const [pushJournal] = readdirSync(join(dataDir, 'push')).filter((f) => f.startsWith('journal-'));
    appendFileSync(join(dataDir, 'push', pushJournal!), '{"o":"set","k":"{e}half"');

    const summary = backupDataDir(dataDir, backup);
    expect(summary.left_out).toEqual(['mystery (unknown)', 'records']);
    expect(summary.files.map((f) => f.path).sort()).toEqual([
      'access/journal-1.ndjson', 'access/snapshot.json', 'admin-token', 'idempotency/journal-1.ndjson', 'idempotency/snapshot.json',
      'payments/journal-1.ndjson', 'payments/snapshot.json', 'polls.ndjson', 'push/journal-1.ndjson', 'push/snapshot.json', 'throttle/attempts.json',
    ]);
    expect(readFileSync(join(backup, 'polls.ndjson'), 'utf8')).toBe('{"poll":1}\n{"poll":2}\n');
    expect(readFileSync(join(backup, 'admin-token'), 'utf8')).toBe('token-0123456789abcdef\n');

    // The service goes on writing: none of it is in the backup.
    await payments.settle(payment('pay_2'));
    await push.set('{e}later', 1);

    const restoredAccess = new EmbeddedAccessStore({ plans, dir: embeddedAccessDir(backup) });
    expect((await restoredAccess.getByKey(key))?.prefix).toBe(record.prefix);
    expect(await restoredAccess.usage(record.prefix, new Date(NOW + 10_000))).toEqual({ lookupsUsed: 3, dailyUsed: 3 });
    const restoredPayments = new EmbeddedPaymentStore(embeddedPaymentsDir(backup));
    expect(await restoredPayments.listByKey('trk_live_Ab3dE9x')).toEqual([payment('pay_1')]);
    const restoredIdempotency = new EmbeddedIdempotencyStore(embeddedIdempotencyDir(backup), () => NOW);
    expect(await restoredIdempotency.claim('scope', 'k1', 'fp', NOW)).toEqual({ kind: 'done', fingerprint: 'fp', answer: { status: 200, body: '{}' } });
    const restoredPush = new EmbeddedKv(join(backup, 'push'), () => NOW);
    expect(await restoredPush.get('{e}endpoint')).toEqual({ url: 'https://example.in/hook' });
    expect(await restoredPush.nextDue('{e}queue')).toBe(NOW + 5_000);
    expect(await restoredPush.get('{e}later')).toBeNull();
    const restoredThrottle = new EmbeddedThrottle(backup, () => { throw new Error('no warning expected'); });
    expect((await restoredThrottle.check(RULE, '203.0.113.7', NOW)).blocked).toBe(true);

    for (const store of [access, payments, idempotency, push, restoredAccess, restoredPayments, restoredIdempotency, restoredPush]) await store.close();
  });

  it('copies the state of the generation a compaction left, not the deleted journal', async () => {
    const payments = new EmbeddedPaymentStore(embeddedPaymentsDir(dataDir));
    await payments.settle(payment('pay_1'));
    await payments.close();
    // Reopened: compacted into snapshot generation 2 with an empty journal-2.
    const again = new EmbeddedPaymentStore(embeddedPaymentsDir(dataDir));
    await again.settle(payment('pay_2'));
    backupDataDir(dataDir, backup);
    expect(readdirSync(join(backup, 'payments')).sort()).toEqual(['journal-2.ndjson', 'snapshot.json']);
    const restored = new EmbeddedPaymentStore(embeddedPaymentsDir(backup));
    expect((await restored.listByKey('trk_live_Ab3dE9x')).map((p) => p.id)).toEqual(['pay_2', 'pay_1']);
    await restored.close();
    await again.close();
  });

  it('starts a store over while a compaction keeps replacing its journal, and gives up past a limit', () => {
    // A snapshot naming a journal that is gone: what the copy sees when a compaction ran between its
    // reads; one that never comes back is given up on, with the store named.
    mkdirSync(join(dataDir, 'payments'));
    writeFileSync(join(dataDir, 'payments', 'snapshot.json'), '{"payments":[],"attempts":[],"generation":5}');
    expect(() => backupDataDir(dataDir, backup)).toThrow(/payments was compacted 20 times while it was being copied/);
  });

  it('refuses a backup directory that is not empty, or inside DATA_DIR', () => {
    mkdirSync(backup);
    writeFileSync(join(backup, 'old'), 'x');
    expect(() => backupDataDir(dataDir, backup)).toThrow(/is not empty/);
    expect(() => backupDataDir(dataDir, join(dataDir, 'copy'))).toThrow(/must be outside DATA_DIR/);
    expect(() => backupDataDir(dataDir, dataDir)).toThrow(/must be outside DATA_DIR/);
    expect(() => backupDataDir(join(root, 'nowhere'), join(root, 'b2'))).toThrow(/does not exist/);
  });

  it('cuts a copied log after its last complete line, whatever its length', () => {
    const from = join(root, 'log');
    const to = join(root, 'log-copy');
    const long = 'x'.repeat(200_000);
    for (const [text, kept] of [['', ''], ['no newline', ''], ['a\n', 'a\n'], [`${long}\n${long}`, `${long}\n`], [`a\n${long}`, 'a\n']]) {
      writeFileSync(from, text!);
      copyWholeLines(from, to);
      expect(readFileSync(to, 'utf8')).toBe(kept);
    }
  });
});
