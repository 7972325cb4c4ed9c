/**
 * Payments as this service keeps them, beside the keys (Redis or DATA_DIR), and the store's
 * contract. Applying a payment is exactly-once per payment id across any number of API instances:
 * the first delivery *claims* the id (an atomic insert-if-absent with a lease), renews the key,
 * then *settles* the record; a later delivery finds it settled (nothing more happens) or still
 * claimed (answered "in progress", so the gateway retries later). A claim whose holder died (lease
 * over, not settled) may be taken again by a redelivery.
 */
import type { PlanName } from '../config/index.ts';
import { MINUTE_MS } from '../time/index.ts';
import type { NotAppliedReason } from './plans.ts';

/**
 * How long a claimed, unsettled payment blocks other deliveries of it: far above one renewal and
 * any clock difference between instances (each judges the lease by its own clock); short beside
 * the gateway's retry schedule (Razorpay retries a failed webhook over about a day).
 */
export const PAYMENT_LEASE_MS = 5 * MINUTE_MS;

export interface PaymentRecord {
  /** The gateway's payment id (`pay_…`). */
  id: string;
  key_prefix: string | null;
  plan: PlanName | null;
  amount_paise: number;
  currency: string;
  /** The gateway's status of the payment (`captured`). */
  status: string;
  paid_at: string;
  link_id: string;
  reference_id: string | null;
  /** Which gateway reported it: `razorpay` or `sandbox`. */
  gateway: string;
  /** True once the key was renewed with `plan` for this payment. */
  applied: boolean;
  /** Why it was not applied (null when applied, or while pending). */
  reason: NotAppliedReason | null;
  state: 'pending' | 'settled';
  /** Epoch ms until which a pending claim holds. */
  lease_until: number;
}

export type PaymentClaim =
  | { kind: 'claimed' }
  | { kind: 'settled'; record: PaymentRecord }
  | { kind: 'in_progress' };

/** A payment link created for one attempt of the renewal page's button. */
export interface LinkAttempt {
  reference_id: string;
  link_id: string;
  short_url: string;
  key_prefix: string;
  plan: PlanName;
}

export interface PaymentStore {
  /** Inserts `pending` unless a settled record or a live claim of its id exists (returned instead). */
  claim(pending: PaymentRecord, nowMs: number): Promise<PaymentClaim>;
  /** Writes the final record of a claimed payment. */
  settle(record: PaymentRecord): Promise<void>;
  /** A key's payments, newest first. */
  listByKey(prefix: string): Promise<PaymentRecord[]>;
  /** Keeps the link created for an attempt unless one is kept already, which is returned instead. */
  saveAttempt(attempt: LinkAttempt): Promise<LinkAttempt>;
  getAttempt(referenceId: string): Promise<LinkAttempt | null>;
  close(): Promise<void>;
}

/** The claim decision over the current record. Pure; both stores apply it atomically. */
export function claimOf(current: PaymentRecord | null, nowMs: number): PaymentClaim {
  if (!current) return { kind: 'claimed' };
  if (current.state === 'settled') return { kind: 'settled', record: current };
  return current.lease_until > nowMs ? { kind: 'in_progress' } : { kind: 'claimed' };
}

/** Newest first, by payment time then id (stable across stores). */
export function newestFirst(records: PaymentRecord[]): PaymentRecord[] {
  return [...records].sort((a, b) => (a.paid_at === b.paid_at ? b.id.localeCompare(a.id) : b.paid_at.localeCompare(a.paid_at)));
}
