import { describe, expect, it } from 'vitest';
import { UsageRecordSchema } from '../schemas/index.ts';
import { AccessError } from './errors.ts';
import { firstExceeded, limitOutcome, retryAfterSeconds } from './limits.ts';
import {
  effectiveStatus, newKeyRecord, parseCreateKeyInput, renewedRecord, toUsageRecord, withNotice, withStatus,
} from './record.ts';
import { plans } from './testutil/stores.ts';
import { secondsToNextUtcMidnight, utcDay } from './time.ts';

const KEY = 'trk_live_Ab3dE9xYz0123456789abcdefGHIJKLm';
const now = new Date('2026-11-21T10:00:00.000Z');
const record = (input: Record<string, unknown> = {}) =>
  newKeyRecord(parseCreateKeyInput({ plan: 'growth', mode: 'live', email: 'ops@example.in', ...input }), KEY, plans, now);

describe('secondsToNextUtcMidnight', () => {
  it.each([
    ['2026-11-21T00:00:00.000Z', 86_400],
    ['2026-11-21T12:00:00.000Z', 43_200],
    ['2026-11-21T23:00:00.000Z', 3_600],
    ['2026-11-21T23:59:59.001Z', 1],
    ['2026-11-21T23:59:59.999Z', 1],
    ['2026-11-21T23:59:58.500Z', 2],
  ])('at %s is %i', (iso, seconds) => {
    expect(secondsToNextUtcMidnight(new Date(iso))).toBe(seconds);
  });

  it('uses the UTC day, not the local one (05:29 IST is still the previous UTC day)', () => {
    expect(utcDay(new Date('2026-11-22T05:29:00+05:30'))).toBe('2026-11-21');
  });
});

describe('key records', () => {
  it('take the plan defaults and a period of the plan validity from now', () => {
    expect(record()).toEqual({
      prefix: 'trk_live_Ab3dE9x', hash: expect.stringMatching(/^[0-9a-f]{64}$/), mode: 'live', email: 'ops@example.in',
      plan: 'growth', status: 'active', period_start: '2026-11-21T10:00:00.000Z', period_end: '2026-12-21T10:00:00.000Z',
      lookups_limit: 4000, daily_quota: 800, burst_per_second: 10, created_at: '2026-11-21T10:00:00.000Z',
      renewed_at: null, notices_sent: {},
    });
  });

  it('normalize given period bounds to UTC with milliseconds', () => {
    const r = record({ period_start: '2026-11-01T05:30:00+05:30' });
    expect(r.period_start).toBe('2026-11-01T00:00:00.000Z');
    expect(r.period_end).toBe('2026-12-01T00:00:00.000Z');
  });

  it('refuse bad input as bad_request', () => {
    for (const input of [{ plan: 'gold' }, { email: 'not-an-email' }, { lookups_limit: 0 }, { burst_per_second: 1.5 },
      { period_start: '2026-11-21' }, { extra: 1 }, { period_start: '2026-12-01T00:00:00Z', period_end: '2026-11-01T00:00:00Z' }]) {
      expect(() => record(input), JSON.stringify(input)).toThrow(expect.objectContaining({ code: 'bad_request', reason: 'invalid_input' }));
    }
  });

  it('are expired from the instant period_end is reached, unless suspended or revoked', () => {
    const r = record();
    const end = Date.parse(r.period_end);
    expect(effectiveStatus(r, new Date(end - 1))).toBe('active');
    expect(effectiveStatus(r, new Date(end))).toBe('expired');
    expect(effectiveStatus(withStatus(r, 'suspended'), new Date(end))).toBe('suspended');
    expect(effectiveStatus(withStatus(r, 'revoked'), new Date(end))).toBe('revoked');
  });

  it('cannot leave revoked, nor be renewed once revoked', () => {
    const revoked = withStatus(record(), 'revoked');
    expect(withStatus(revoked, 'revoked').status).toBe('revoked');
    expect(() => withStatus(revoked, 'active')).toThrow(AccessError);
    expect(() => withStatus(revoked, 'suspended')).toThrow(expect.objectContaining({ code: 'conflict', reason: 'key_revoked' }));
    expect(() => renewedRecord(revoked, plans, undefined, now)).toThrow(expect.objectContaining({ reason: 'key_revoked' }));
  });

  it('a renewal in the same millisecond still starts a new period (its counters start at zero)', () => {
    const renewed = renewedRecord(record(), plans, undefined, now);
    expect(renewed.period_start).toBe('2026-11-21T10:00:00.001Z');
    expect(renewed.period_end).toBe('2026-12-21T10:00:00.001Z');
  });

  it('renew from now; a plan switches limits, no plan keeps a custom deal', () => {
    const custom = withNotice(record({ lookups_limit: 9000 }), 'three_day', now)!;
    const later = new Date('2027-01-05T08:00:00.000Z');
    const same = renewedRecord(custom, plans, undefined, later);
    expect(same).toMatchObject({ plan: 'growth', lookups_limit: 9000, period_start: '2027-01-05T08:00:00.000Z',
      period_end: '2027-02-04T08:00:00.000Z', renewed_at: '2027-01-05T08:00:00.000Z', notices_sent: {} });
    expect(renewedRecord(custom, plans, 'trial', later)).toMatchObject({ plan: 'trial', lookups_limit: 100,
      daily_quota: 100, burst_per_second: 5, period_end: '2027-01-19T08:00:00.000Z' });
  });

  it('mark each notice once', () => {
    const once = withNotice(record(), 'last_day', now);
    expect(once?.notices_sent).toEqual({ last_day: '2026-11-21T10:00:00.000Z' });
    expect(withNotice(once!, 'last_day', now)).toBeNull();
  });

  it('give the spec usage record', () => {
    const usage = toUsageRecord(record(), { lookupsUsed: 12, dailyUsed: 3 }, now);
    expect(UsageRecordSchema.parse(usage)).toEqual({
      key_prefix: 'trk_live_Ab3dE9x', plan: 'growth', status: 'active',
      period: { start: '2026-11-21T10:00:00.000Z', end: '2026-12-21T10:00:00.000Z', lookups_used: 12, lookups_limit: 4000, lookups_remaining: 3988 },
      rate_limits: { burst_per_second: 10, daily_quota: 800 },
    });
    expect(toUsageRecord(record(), { lookupsUsed: 0, dailyUsed: 0 }, new Date('2027-01-01T00:00:00Z')).status).toBe('expired');
  });
});

describe('limit order', () => {
  const limits = { burst: 2, daily: 2, period: 2 };
  it('checks burst, then the day, then the period', () => {
    expect(firstExceeded(limits, { burst: 1, daily: 1, period: 1 })).toBeNull();
    expect(firstExceeded(limits, { burst: 2, daily: 2, period: 2 })).toBe('rate_limit_exceeded');
    expect(firstExceeded(limits, { burst: 1, daily: 2, period: 2 })).toBe('daily_quota_exceeded');
    expect(firstExceeded(limits, { burst: 1, daily: 1, period: 2 })).toBe('plan_quota_exceeded');
  });

  it('gives Retry-After 1, seconds to midnight, and none for the plan quota', () => {
    const late = new Date('2026-11-21T23:00:00.000Z');
    expect(retryAfterSeconds('rate_limit_exceeded', late)).toBe(1);
    expect(retryAfterSeconds('daily_quota_exceeded', late)).toBe(3600);
    expect(retryAfterSeconds('plan_quota_exceeded', late)).toBeUndefined();
    const ticket = { prefix: 'p', hash: 'h', periodStart: now.toISOString(), day: '2026-11-21' };
    expect(limitOutcome('plan_quota_exceeded', limits, { burst: 0, daily: 0, period: 2 }, late, ticket)).not.toHaveProperty('retryAfterSeconds');
  });
});

describe('the key request\'s e-mail', () => {
  it('a one-letter top-level domain (a@b.c) is refused with what is wrong and an example; ops@example.com is taken', () => {
    expect(() => parseCreateKeyInput({ plan: 'trial', mode: 'test', email: 'a@b.c' }))
      .toThrow('Invalid key request: email: "a@b.c" is not an e-mail address (name@domain.tld, the last part two letters or more, e.g. ops@example.com).');
    expect(parseCreateKeyInput({ plan: 'trial', mode: 'test', email: 'ops@example.com' }).email).toBe('ops@example.com');
  });
});
