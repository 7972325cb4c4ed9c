/**
 * A crash between renewing a key for a payment and settling the payment's record (issue 29: "one
 * between renewing and recording a payment lets a repeat delivery renew twice"): a child process
 * delivers the payment and is killed with SIGKILL at that point (crash-child.ts); the
 * stores are opened again, as after a restart, and the payment is delivered again. The key was
 * renewed once: by the killed delivery, whose renewal carried the payment id. Run on the embedded
 * store by settle-crash.test.ts and on Redis by settle-crash.services.test.ts.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../time/index.ts';
import { PAYMENT_LEASE_MS } from '../payments.ts';
import { deliverPayment, growthPayment, openBillingStores, type BillingBackend, type BillingStores } from './stores.ts';

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const PAID_AT = T0 + 60 * MINUTE_MS;

export function settleCrashSuite(name: string, backendOf: () => Promise<{ backend: BillingBackend; dispose(): Promise<void> }>): void {
  describe(`a payment's delivery killed between renewing and recording (${name})`, () => {
    let dispose: (() => Promise<void>) | null = null;
    let stores: BillingStores | null = null;
    afterEach(async () => {
      await stores?.close();
      await dispose?.();
    });

    it('SIGKILL at that point, restart, deliver again: the key is renewed once and the payment recorded applied', { timeout: 60_000 }, async () => {
      const made = await backendOf();
      dispose = made.dispose;
      stores = openBillingStores(made.backend);
      const { record: key } = await stores.access.createKey({ plan: 'starter', mode: 'live', email: 'crash@example.in' }, new Date(T0));
      await stores.close();
      stores = null;

      const run = promisify(execFile)(process.execPath, [CHILD, JSON.stringify(made.backend), key.prefix, 'pay_crash0000001', String(PAID_AT)]);
      const failure = await run.then(() => null, (err: { signal?: string; stderr?: string }) => err);
      expect(failure?.signal, failure?.stderr).toBe('SIGKILL');

      stores = openBillingStores(made.backend);
      const renewed = await stores.access.getByPrefix(key.prefix);
      expect(renewed).toMatchObject({ plan: 'growth', renewed_at: new Date(PAID_AT).toISOString(), period_start: new Date(PAID_AT).toISOString() });
      expect(await stores.payments.listByKey(key.prefix)).toMatchObject([{ id: 'pay_crash0000001', state: 'pending', applied: false }]);
      const paid = growthPayment(key.prefix, 'pay_crash0000001', PAID_AT);

      // The dead process's claim holds until its lease ends: the gateway is told to deliver later.
      expect((await deliverPayment(stores, paid, PAID_AT + MINUTE_MS)).kind).toBe('in_progress');
      // Delivered again after the lease, an hour after the killed delivery: applied, not renewed again.
      const later = PAID_AT + PAYMENT_LEASE_MS + 60 * MINUTE_MS;
      const again = await deliverPayment(stores, paid, later);
      expect(again).toMatchObject({ kind: 'applied', record: { id: 'pay_crash0000001', applied: true, state: 'settled' } });
      expect(await stores.access.getByPrefix(key.prefix)).toEqual(renewed);
      expect((await deliverPayment(stores, paid, later + MINUTE_MS)).kind).toBe('duplicate');
      expect(await stores.access.getByPrefix(key.prefix)).toEqual(renewed);
      expect(await stores.payments.listByKey(key.prefix)).toMatchObject([{ id: 'pay_crash0000001', state: 'settled', applied: true, reason: null }]);
    });
  });
}
