import { z } from 'zod';
import { PLAN_NAMES, type PlanName, type Plans } from '../config/index.ts';
import { UtcMillis, type UsageRecord } from '../schemas/index.ts';
import { AccessError } from './errors.ts';
import { KEY_MODES, hashKey, keyMode, keyPrefix } from './key-format.ts';
import { DAY_MS } from '../time/index.ts';
import { toIso } from './time.ts';

export const KEY_STATUSES = ['active', 'suspended', 'revoked'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];
/** What callers act on: the stored status, with `expired` once the period has ended. */
export type EffectiveStatus = KeyStatus | 'expired';
export const NOTICES = ['three_day', 'last_day'] as const;
export type Notice = (typeof NOTICES)[number];

const positiveInt = z.number().int().positive();

/** One API key as stored. The plain key is never part of it: only its SHA-256 `hash`. */
export const KeyRecordSchema = z.object({
  prefix: z.string().regex(/^trk_(live|test)_[A-Za-z0-9]{7}$/),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  mode: z.enum(KEY_MODES),
  email: z.string().min(1),
  plan: z.enum(PLAN_NAMES),
  status: z.enum(KEY_STATUSES),
  period_start: UtcMillis,
  period_end: UtcMillis,
  lookups_limit: positiveInt,
  daily_quota: positiveInt,
  burst_per_second: positiveInt,
  created_at: UtcMillis,
  renewed_at: UtcMillis.nullable(),
  notices_sent: z.object({ three_day: UtcMillis.optional(), last_day: UtcMillis.optional() }).strict(),
}).strict();
export type KeyRecord = z.infer<typeof KeyRecordSchema>;

/** Any ISO 8601 instant with an offset, normalized to the service's UTC-with-milliseconds form. */
const Instant = z.iso.datetime({ offset: true }).transform((s) => toIso(Date.parse(s)));

/** The body of `POST /admin/keys` (contracts.md); the optional numbers override the plan's. */
export const CreateKeyInputSchema = z.object({
  plan: z.enum(PLAN_NAMES),
  mode: z.enum(KEY_MODES),
  // zod's email rule: local@domain.tld with a top-level domain of two letters or more (no real TLD
  // has one letter, so `a@b.c` is refused); the message says so instead of zod's bare "Invalid".
  email: z.string().trim().max(254).pipe(z.email({
    error: (issue) => `${JSON.stringify(issue.input)} is not an e-mail address ` +
      `(name@domain.tld, the last part two letters or more, e.g. ops@example.com)`,
  })),
  period_start: Instant.optional(),
  period_end: Instant.optional(),
  lookups_limit: positiveInt.optional(),
  daily_quota: positiveInt.optional(),
  burst_per_second: positiveInt.optional(),
}).strict();
export type CreateKeyInput = z.input<typeof CreateKeyInputSchema>;
type ValidCreateKeyInput = z.output<typeof CreateKeyInputSchema>;

/** Counters of the current period and UTC day, as a store reports them. */
export interface UsageCounters {
  lookupsUsed: number;
  dailyUsed: number;
}

export function parseCreateKeyInput(value: unknown): ValidCreateKeyInput {
  const result = CreateKeyInputSchema.safeParse(value);
  if (!result.success) {
    const detail = result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    throw new AccessError('invalid_input', `Invalid key request: ${detail}.`);
  }
  return result.data;
}

/** E-mail addresses compare case-insensitively. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Providers that ignore dots in the local part, and the one domain their addresses share. */
const DOTLESS_DOMAINS: Record<string, string> = { 'gmail.com': 'gmail.com', 'googlemail.com': 'gmail.com' };

/**
 * The mailbox an address delivers to, for the one-trial-per-e-mail rule and the trial page's
 * throttle (issue 29, finding 9): case-insensitive, `+tag` dropped (plus-addressing, which most
 * providers offer), and for Gmail dots dropped and googlemail.com read as gmail.com. So
 * A.B+x@GoogleMail.com and ab@gmail.com are one mailbox. Two people whose addresses differ only
 * by a `+tag` at another provider count as one: rare, and they can ask an operator for a key.
 */
export function mailboxOf(email: string): string {
  const address = normalizeEmail(email);
  const at = address.lastIndexOf('@');
  if (at <= 0) return address;
  let local = address.slice(0, at);
  let domain = address.slice(at + 1);
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  const dotless = DOTLESS_DOMAINS[domain];
  if (dotless) {
    local = local.replaceAll('.', '');
    domain = dotless;
  }
  return `${local}@${domain}`;
}

function periodEnd(startMs: number, plan: PlanName, plans: Plans): number {
  return startMs + plans[plan].validity_days * DAY_MS;
}

/**
 * The record of a freshly generated `key`. The period starts now unless given, and lasts the plan's
 * validity unless an end is given.
 */
export function newKeyRecord(input: ValidCreateKeyInput, key: string, plans: Plans, now: Date): KeyRecord {
  if (keyMode(key) !== input.mode) throw new Error(`generated key does not match mode ${input.mode}`);
  const plan = plans[input.plan];
  const startMs = input.period_start ? Date.parse(input.period_start) : now.getTime();
  const endMs = input.period_end ? Date.parse(input.period_end) : periodEnd(startMs, input.plan, plans);
  if (endMs <= startMs) throw new AccessError('invalid_input', 'Invalid key request: period_end must be after period_start.');
  return {
    prefix: keyPrefix(key),
    hash: hashKey(key),
    mode: input.mode,
    email: input.email,
    plan: input.plan,
    status: 'active',
    period_start: toIso(startMs),
    period_end: toIso(endMs),
    lookups_limit: input.lookups_limit ?? plan.lookups,
    daily_quota: input.daily_quota ?? plan.daily_quota,
    burst_per_second: input.burst_per_second ?? plan.burst_per_second,
    created_at: toIso(now.getTime()),
    renewed_at: null,
    notices_sent: {},
  };
}

/**
 * A new period from now. Given a plan, the key moves to it with that plan's limits; without one it
 * keeps its current limits, so a custom deal survives renewal. Status is kept (a suspended key stays
 * suspended), notices start over. Revoked keys cannot be renewed.
 */
export function renewedRecord(record: KeyRecord, plans: Plans, plan: PlanName | undefined, now: Date): KeyRecord {
  if (record.status === 'revoked') throw new AccessError('key_revoked', `Key ${record.prefix} is revoked; revocation is final.`);
  const nowMs = now.getTime();
  const limits = plan
    ? { plan, lookups_limit: plans[plan].lookups, daily_quota: plans[plan].daily_quota, burst_per_second: plans[plan].burst_per_second }
    : {};
  const next = { ...record, ...limits };
  // Counters are keyed by the period start, so a new period must start later than the old one,
  // even when renewed within the same millisecond.
  const startMs = Math.max(nowMs, Date.parse(record.period_start) + 1);
  return {
    ...next,
    period_start: toIso(startMs),
    period_end: toIso(periodEnd(startMs, next.plan, plans)),
    renewed_at: toIso(nowMs),
    notices_sent: {},
  };
}

/** Suspend, resume and revoke; revoked is final (revoking again is a no-op). */
export function withStatus(record: KeyRecord, status: KeyStatus): KeyRecord {
  if (record.status === 'revoked' && status !== 'revoked') {
    throw new AccessError('key_revoked', `Key ${record.prefix} is revoked; revocation is final.`);
  }
  return { ...record, status };
}

/** Marks a notice of the current period as sent at `at`; null when it already was (each goes once). */
export function withNotice(record: KeyRecord, which: Notice, at: Date): KeyRecord | null {
  if (record.notices_sent[which]) return null;
  return { ...record, notices_sent: { ...record.notices_sent, [which]: toIso(at.getTime()) } };
}

/**
 * Revoked and suspended win over expired: renewing would not help those keys, so the caller should
 * hear the reason that does (401, not 402).
 */
export function effectiveStatus(record: KeyRecord, now: Date): EffectiveStatus {
  if (record.status !== 'active') return record.status;
  return now.getTime() >= Date.parse(record.period_end) ? 'expired' : 'active';
}

/**
 * A period an operator set to start later (`period_start` in the future): the key is valid but
 * buys nothing yet, so lookups are refused (402) and count in no period.
 */
export function periodNotStarted(record: KeyRecord, now: Date): boolean {
  return now.getTime() < Date.parse(record.period_start);
}

/** The usage record of the spec (`GET /v1/usage`). */
export function toUsageRecord(record: KeyRecord, counters: UsageCounters, now: Date): UsageRecord {
  return {
    key_prefix: record.prefix,
    plan: record.plan,
    status: effectiveStatus(record, now),
    period: {
      start: record.period_start,
      end: record.period_end,
      lookups_used: counters.lookupsUsed,
      lookups_limit: record.lookups_limit,
      lookups_remaining: Math.max(0, record.lookups_limit - counters.lookupsUsed),
    },
    rate_limits: { burst_per_second: record.burst_per_second, daily_quota: record.daily_quota },
  };
}
