import type { KeyRecord } from './record.ts';
import { secondsToNextUtcMidnight } from './time.ts';

/** Refusals of a key that passed authentication, checked in this order. */
export type LimitCode = 'rate_limit_exceeded' | 'daily_quota_exceeded' | 'plan_quota_exceeded';
/**
 * Refusals because the key changed between authentication and consume (suspended, revoked or
 * expired meanwhile): the store checks the stored key, not the caller's copy.
 */
export type KeyStateCode = 'invalid_api_key' | 'payment_required';

/** One number per limit: burst (this second), daily (this UTC day), period (this plan period). */
export interface Allowance {
  burst: number;
  daily: number;
  period: number;
}

/**
 * Names the exact windows a granted lookup was counted in, so `refund` takes it back from those
 * windows even when it runs after midnight or after a renewal.
 */
export interface ConsumeTicket {
  prefix: string;
  hash: string;
  periodStart: string;
  /** UTC day `YYYY-MM-DD` of the daily counter. */
  day: string;
}

/** What the `RateLimit-*` and `X-Lookups-Remaining` headers are made of. */
export interface LimitState {
  limits: Allowance;
  remaining: Allowance;
  /** Seconds until the burst window closes (`RateLimit-Reset`). */
  burstResetSeconds: number;
}

export type ConsumeGranted = { ok: true; ticket: ConsumeTicket } & LimitState;
export type ConsumeLimited = { ok: false; code: LimitCode; retryAfterSeconds?: number } & LimitState;
export type ConsumeRefusedKey = { ok: false; code: KeyStateCode };
export type ConsumeResult = ConsumeGranted | ConsumeLimited | ConsumeRefusedKey;

/** Bursts are counted in fixed one-second windows. */
export const BURST_WINDOW_SECONDS = 1;

export function limitsOf(record: KeyRecord): Allowance {
  return { burst: record.burst_per_second, daily: record.daily_quota, period: record.lookups_limit };
}

/** The first limit a new lookup would break, given the counts before it; null when it may pass. */
export function firstExceeded(limits: Allowance, used: Allowance): LimitCode | null {
  if (used.burst >= limits.burst) return 'rate_limit_exceeded';
  if (used.daily >= limits.daily) return 'daily_quota_exceeded';
  if (used.period >= limits.period) return 'plan_quota_exceeded';
  return null;
}

/** Retry-After per decisions.md: 1 for bursts, seconds to 00:00 UTC for the day, none for the plan. */
export function retryAfterSeconds(code: LimitCode, now: Date): number | undefined {
  if (code === 'rate_limit_exceeded') return BURST_WINDOW_SECONDS;
  if (code === 'daily_quota_exceeded') return secondsToNextUtcMidnight(now);
  return undefined;
}

/**
 * The answer of a consume that got past the key checks, built the same way by every store.
 * `used` are the counts after the call (incremented when granted, untouched when refused).
 */
export function limitOutcome(
  refusal: LimitCode | null, limits: Allowance, used: Allowance, now: Date, ticket: ConsumeTicket,
): ConsumeGranted | ConsumeLimited {
  const state: LimitState = {
    limits,
    remaining: {
      burst: Math.max(0, limits.burst - used.burst),
      daily: Math.max(0, limits.daily - used.daily),
      period: Math.max(0, limits.period - used.period),
    },
    burstResetSeconds: BURST_WINDOW_SECONDS,
  };
  if (refusal === null) return { ok: true, ticket, ...state };
  const retry = retryAfterSeconds(refusal, now);
  return retry === undefined ? { ok: false, code: refusal, ...state } : { ok: false, code: refusal, retryAfterSeconds: retry, ...state };
}

/**
 * A batch's count (`AccessStore.authorizeBatch`): the batch is one request for the burst limit, and
 * `granted` of its n lookups (the first ones, in input order) count against the daily and period
 * quotas; the rest are refused by `refused`, exactly as one lookup after the last granted would be.
 */
export type BatchGranted = { ok: true; granted: number; refused: ConsumeLimited | null; ticket: ConsumeTicket } & LimitState;
export type BatchConsumeResult = BatchGranted | ConsumeLimited | ConsumeRefusedKey;

/**
 * How many of a batch's n lookups pass, given the counts before it: none when the burst is used up
 * (the whole batch is refused), else as many as the daily and period quotas leave. Both stores
 * decide by this rule (the Redis script repeats it in Lua).
 */
export function batchGrant(limits: Allowance, before: Allowance, n: number): { burstRefused: boolean; granted: number } {
  if (before.burst >= limits.burst) return { burstRefused: true, granted: 0 };
  return { burstRefused: false, granted: Math.max(0, Math.min(n, limits.daily - before.daily, limits.period - before.period)) };
}

/** The answer of a batch count, from the counts before it and what was granted (see batchGrant). */
export function batchOutcome(
  limits: Allowance, before: Allowance, n: number, granted: number, burstRefused: boolean, now: Date, ticket: ConsumeTicket,
): BatchGranted | ConsumeLimited {
  if (burstRefused) return limitOutcome('rate_limit_exceeded', limits, before, now, ticket) as ConsumeLimited;
  const used = { burst: before.burst + 1, daily: before.daily + granted, period: before.period + granted };
  const state = limitOutcome(null, limits, used, now, ticket) as ConsumeGranted;
  let refused: ConsumeLimited | null = null;
  if (granted < n) {
    const code: LimitCode = used.daily >= limits.daily ? 'daily_quota_exceeded' : 'plan_quota_exceeded';
    refused = limitOutcome(code, limits, used, now, ticket) as ConsumeLimited;
  }
  return { ...state, granted, refused };
}
