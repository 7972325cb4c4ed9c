import type { AccessStore } from './store.ts';
import { effectiveStatus, periodNotStarted, type KeyRecord } from './record.ts';

/**
 * Whether a key may act now: the one rule every route and every background worker (poller,
 * change detector, dispatcher) asks (contracts.md "Push", inactive keys). Only `active` acts:
 * - `suspended`, `expired` (past period.end) and `not_started` (an operator set a later start) are
 *   paused: watches are not polled, no events are made, queued events are held and sent on resume
 *   or renewal;
 * - `revoked` (final) and `unknown` (no such key) are gone: their watches, endpoints and queued
 *   events are dropped.
 */
export type KeyStanding = 'active' | 'suspended' | 'expired' | 'not_started' | 'revoked' | 'unknown';

export function standingOf(record: KeyRecord | null, now: Date): KeyStanding {
  if (!record) return 'unknown';
  const status = effectiveStatus(record, now);
  if (status !== 'active') return status;
  return periodNotStarted(record, now) ? 'not_started' : 'active';
}

/** Gone for good: its push state is dropped rather than held. */
export function isGone(standing: KeyStanding): boolean {
  return standing === 'revoked' || standing === 'unknown';
}

/** A worker's question: the standing of a key, by prefix, as the store has it now. */
export type StandingOf = (prefix: string, nowMs: number) => Promise<KeyStanding>;

/**
 * Reads the key's record at every question, never from a process's memory: a revoke or suspend
 * answered by one API instance is seen by every worker's next question (one Redis GET with Redis).
 */
export function standingFromStore(access: Pick<AccessStore, 'getByPrefix'>): StandingOf {
  return async (prefix, nowMs) => standingOf(await access.getByPrefix(prefix), new Date(nowMs));
}
