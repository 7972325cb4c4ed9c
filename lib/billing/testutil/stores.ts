/**
 * Test support: the keys and payments of one backend, opened the way the API opens them, so a
 * test and a child process it kills (crash-child.ts) see the same state.
 */
import { EmbeddedAccessStore, RedisAccessStore, embeddedAccessDir, type AccessStore } from '../../access/index.ts';
import { plans } from '../../access/testutil/stores.ts';
import { connectRedis, type RedisClient } from '../../redis/index.ts';
import { EmbeddedPaymentStore, embeddedPaymentsDir } from '../payments-embedded.ts';
import { RedisPaymentStore } from '../payments-redis.ts';
import type { PaymentStore } from '../payments.ts';
import { settlePaidLink, type SettleOutcome } from '../settle.ts';
import type { PaidLink } from '../event.ts';

export type BillingBackend = { kind: 'embedded'; dataDir: string } | { kind: 'redis'; url: string; namespace: string };

export interface BillingStores {
  access: AccessStore;
  payments: PaymentStore;
  close(): Promise<void>;
}

export function openBillingStores(backend: BillingBackend): BillingStores {
  if (backend.kind === 'embedded') {
    const access = new EmbeddedAccessStore({ plans, dir: embeddedAccessDir(backend.dataDir) });
    const payments = new EmbeddedPaymentStore(embeddedPaymentsDir(backend.dataDir));
    return { access, payments, close: async () => { await payments.close(); await access.close(); } };
  }
  const redis: RedisClient = connectRedis(backend.url);
  const access = new RedisAccessStore({ plans, redis, namespace: `${backend.namespace}access:` });
  const payments = new RedisPaymentStore(redis, `${backend.namespace}payments:`);
  return { access, payments, close: async () => { await access.close(); redis.disconnect(); } };
}

/** A captured growth payment (₹999) for the key, as the sandbox gateway would report it. */
export function growthPayment(prefix: string, paymentId: string, paidAtMs: number): PaidLink {
  return {
    payment_id: paymentId, link_id: 'plink_crash000001', reference_id: 'rn_crashcrashcrashcr', amount_paise: 99_900, currency: 'INR',
    status: 'captured', key_prefix: prefix, plan: 'growth', paid_at_s: Math.floor(paidAtMs / 1000),
  };
}

/** One delivery of `paid` at `nowMs`, settled as the webhook route settles it (no mail, no report). */
export function deliverPayment(stores: Pick<BillingStores, 'access' | 'payments'>, paid: PaidLink, nowMs: number): Promise<SettleOutcome> {
  return settlePaidLink(paid, 'sandbox', {
    access: stores.access, payments: stores.payments, plans, mailer: null, report: null, clock: () => nowMs,
    gatewayOf: () => 'sandbox', log: () => undefined,
  });
}
