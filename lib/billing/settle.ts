/**
 * What a verified `payment_link.paid` does: claim the payment id (exactly once across instances),
 * renew the key with the paid plan when the payment is exactly its price and the renewal rule
 * allows it (renewal.ts: never lower), recording the payment id on the key in the same step,
 * settle the record, then report it (ClickHouse) and mail the receipt. Reporting
 * and mail failures are logged, never undo the renewal nor make the gateway deliver it again.
 */
import { AccessError, type AccessStore, type KeyMode, type KeyRecord } from '../access/index.ts';
import type { Plans } from '../config/index.ts';
import type { Mailer } from '../notices/index.ts';
import type { PaidLink } from './event.ts';
import { PAYMENT_LEASE_MS, type PaymentRecord, type PaymentStore } from './payments.ts';
import { paymentProblem, type NotAppliedReason } from './plans.ts';
import { composeReceipt } from './receipt.ts';
import { paidRenewal } from './renewal.ts';

/** Where settled payments are also written for reporting (ClickHouse's `payments` table). */
export interface PaymentReport {
  write(record: PaymentRecord): Promise<void>;
}

export interface SettleDeps {
  access: AccessStore;
  payments: PaymentStore;
  plans: Plans;
  mailer: Mailer | null;
  report: PaymentReport | null;
  clock: () => number;
  /** The gateway name keys of a mode pay through (null: none), so a payment reported by another is not applied. */
  gatewayOf: (mode: KeyMode) => string | null;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** A key was renewed (push: its paused watches go on and held events are sent, as an admin renew does). */
  onRenewed?: (key: KeyRecord) => Promise<void>;
}

export type SettleOutcome =
  | { kind: 'applied'; record: PaymentRecord; key: KeyRecord }
  | { kind: 'not_applied'; record: PaymentRecord }
  | { kind: 'duplicate'; record: PaymentRecord }
  | { kind: 'in_progress' };

function pendingOf(paid: PaidLink, gateway: string, nowMs: number): PaymentRecord {
  return {
    id: paid.payment_id, key_prefix: paid.key_prefix, plan: paid.plan, amount_paise: paid.amount_paise,
    currency: paid.currency, status: paid.status, paid_at: new Date(paid.paid_at_s * 1000).toISOString(),
    link_id: paid.link_id, reference_id: paid.reference_id, gateway,
    applied: false, reason: null, state: 'pending', lease_until: nowMs + PAYMENT_LEASE_MS,
  };
}

async function problemWith(paid: PaidLink, gateway: string, key: KeyRecord | null, deps: SettleDeps): Promise<NotAppliedReason | null> {
  const problem = paymentProblem(paid, deps.plans);
  if (problem) return problem;
  if (!key) return 'unknown_key';
  if (key.status === 'revoked') return 'key_revoked';
  if (deps.gatewayOf(key.mode) !== gateway) return 'wrong_gateway';
  return null;
}

export async function settlePaidLink(paid: PaidLink, gateway: string, deps: SettleDeps): Promise<SettleOutcome> {
  const now = deps.clock();
  const pending = pendingOf(paid, gateway, now);
  const claim = await deps.payments.claim(pending, now);
  if (claim.kind === 'settled') return { kind: 'duplicate', record: claim.record };
  if (claim.kind === 'in_progress') return { kind: 'in_progress' };

  let key = paid.key_prefix ? await deps.access.getByPrefix(paid.key_prefix) : null;
  let reason = await problemWith(paid, gateway, key, deps);
  if (reason === null) {
    try {
      // The renewal and the record that this payment id renewed the key are one atomic step of the
      // access store: a crash before `settle` below leaves the payment claimed (a redelivery claims
      // it again once the lease lapses) and finds it already applied, so it renews once.
      const plan = paid.plan!;
      const renewal = await deps.access.renewForPayment(paid.key_prefix!, paid.payment_id, (current) => paidRenewal(current, plan, deps.plans, new Date(now)));
      key = renewal.record;
      if (renewal.outcome === 'refused') {
        reason = 'lower_plan';
      } else {
        // Also after `already_applied`: the process that renewed may have died before doing this.
        const renewed = key;
        await deps.onRenewed?.(renewed).catch((err: unknown) => deps.log('error', `billing: push after renewing ${renewed.prefix}: ${(err as Error).message}`));
      }
    } catch (err) {
      // Revoked between the read and the renewal: recorded, not applied.
      if (!(err instanceof AccessError)) throw err;
      reason = err.reason === 'key_revoked' ? 'key_revoked' : 'unknown_key';
    }
  }
  const record: PaymentRecord = { ...pending, applied: reason === null, reason, state: 'settled', lease_until: 0 };
  await deps.payments.settle(record);
  deps.log(
    reason === null ? 'info' : 'warn',
    `billing: payment ${record.id} for ${record.key_prefix ?? '(no key)'} ` +
      `${reason === null ? `renewed the key on ${record.plan}` : `recorded, not applied (${reason})`}`,
  );

  if (deps.report) {
    await deps.report.write(record).catch((err: unknown) => deps.log(
      'error', `billing: payment ${record.id} not written to the payments table: ${(err as Error).message}`,
    ));
  }
  if (key && deps.mailer) {
    await deps.mailer.send(composeReceipt(record, key)).catch((err: unknown) => deps.log(
      'error', `billing: receipt of payment ${record.id} for ${key.prefix} not sent: ${(err as Error).message}`,
    ));
  }
  return record.applied ? { kind: 'applied', record, key: key! } : { kind: 'not_applied', record };
}
