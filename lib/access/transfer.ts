import type { KeyRecord } from './record.ts';

/**
 * One key as `store move` carries it from the embedded store to Redis: its record (the hash, never
 * the plain key), its counters of the current period and day, the payment ids that renewed it, and
 * the e-mail whose first trial it is. Enough for the key to authenticate with the same counts.
 */
export interface KeyTransfer {
  record: KeyRecord;
  counter: { period_start: string; period_used: number; day: string; day_used: number } | null;
  payment_ids: string[];
  /** The mailbox (record.ts mailboxOf) this key is the first trial of, or null. */
  trial_of: string | null;
}
