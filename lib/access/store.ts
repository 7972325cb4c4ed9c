import type { PlanName } from '../config/index.ts';
import type { KeyMode } from './key-format.ts';
import type { BatchConsumeResult, ConsumeResult, ConsumeTicket } from './limits.ts';
import type { CreateKeyInput, KeyRecord, KeyStatus, Notice, UsageCounters } from './record.ts';

export interface CreatedKey {
  /** The full key: shown to its owner once, never stored. */
  key: string;
  record: KeyRecord;
}

/** A lookup's access step: the presented key's record, and the counting outcome when asked for. */
export interface Authorization {
  /** Null for a malformed or unknown key. */
  record: KeyRecord | null;
  /** `consume`'s outcome when counting was asked for and the key exists; null otherwise. */
  consumed: ConsumeResult | null;
}

/** A batch's access step: the presented key's record and the batch's count when asked for. */
export interface BatchAuthorization {
  record: KeyRecord | null;
  consumed: BatchConsumeResult | null;
}

/**
 * What `renewForPayment` did: renewed the key and recorded the payment id with it, found that
 * payment already applied to it (nothing written), or was refused by the caller's rule.
 */
export interface PaymentRenewal {
  outcome: 'renewed' | 'already_applied' | 'refused';
  /** The key as it is after the call. */
  record: KeyRecord;
}

export interface TrialRequest {
  email: string;
  mode: KeyMode;
}

/**
 * Keys, their states and their counters. Two implementations behave identically: Redis (shared by
 * any number of API processes) and embedded (one process, files under DATA_DIR/access/).
 *
 * Admin operations throw `AccessError` (not_found, conflict, bad_request); lookups return null.
 * Every time-dependent operation takes `now` from the caller, so tests control the clock.
 */
export interface AccessStore {
  /** `POST /admin/keys`: plan defaults, overridable per key. Operators may issue any number of trials. */
  createKey(input: CreateKeyInput, now: Date): Promise<CreatedKey>;
  /** The self-serve trial page: a trial key, refused (conflict `trial_exists`) when the e-mail had one. */
  issueTrial(request: TrialRequest, now: Date): Promise<CreatedKey>;
  /** The record of a presented key (looked up by hash), or null for malformed or unknown keys. */
  getByKey(key: string): Promise<KeyRecord | null>;
  getByPrefix(prefix: string): Promise<KeyRecord | null>;
  /**
   * The hot path of a lookup in one step (with Redis, one script call shared by the lookups of the
   * event-loop turn): `getByKey(key)` and, when `count` is true and the key exists, `consume` of it. The caller still checks the record first: a
   * suspended, revoked or expired key is refused by both, and counts nothing.
   */
  authorize(key: string, now: Date, count: boolean): Promise<Authorization>;
  /**
   * `POST /v1/track/batch`'s access step, one atomic step: the record and, when the key exists and
   * is active, the batch counted as one request against the burst limit and as `lookups` lookups
   * against the daily and period quotas (as many as they leave; see `batchGrant`). A refusal of
   * the whole batch (burst, key state) counts nothing. Refund granted lookups one by one.
   */
  authorizeBatch(key: string, now: Date, lookups: number): Promise<BatchAuthorization>;
  /** Suspend, resume or revoke. Revoked is final: leaving it throws conflict `key_revoked`. */
  setStatus(prefix: string, status: KeyStatus): Promise<KeyRecord>;
  /** A new period from now, counters at zero at once; `plan` switches to that plan's limits. */
  renew(prefix: string, plan: PlanName | undefined, now: Date): Promise<KeyRecord>;
  /**
   * A paid renewal, once per payment id: `next` decides on the stored key (a new record, or null to
   * refuse) and the new record is written together with the payment id in one atomic step (one
   * journal entry; one script on the key's slot). A payment id already recorded on the key writes
   * nothing (`already_applied`), so a repeat delivery after a crash anywhere cannot renew twice.
   * Throws `AccessError` as `renew` does (unknown or revoked key).
   */
  renewForPayment(prefix: string, paymentId: string, next: (current: KeyRecord) => KeyRecord | null): Promise<PaymentRenewal>;
  /** Lookups counted in the key's current period and in the UTC day of `now`. */
  usage(prefix: string, now: Date): Promise<UsageCounters>;
  /** Every key, oldest first (for the expiry-notice job). */
  list(): Promise<KeyRecord[]>;
  /**
   * Records that a notice of the current period was sent. Returns false when it had already been
   * marked, so concurrent notice jobs send each notice once.
   */
  markNoticeSent(prefix: string, which: Notice, at: Date): Promise<boolean>;
  /** The first trial key ever issued to this e-mail (compared case-insensitively), or null. */
  findTrialByEmail(email: string): Promise<KeyRecord | null>;
  /**
   * Checks and counts one lookup atomically: burst, then daily quota, then period quota. A refusal
   * counts nothing. `record` names the key; the stored key's current state and limits decide, so a
   * key suspended, revoked, expired or renewed since `record` was read is handled correctly.
   */
  consume(record: KeyRecord, now: Date): Promise<ConsumeResult>;
  /**
   * Takes back a granted lookup from the period and daily counters it was counted in (for answers
   * that must not consume, e.g. 502). The burst slot is not returned: the request did reach us.
   * Refunding the same ticket twice is the caller's bug; counters never go below zero.
   */
  refund(ticket: ConsumeTicket): Promise<void>;
  close(): Promise<void>;
}
