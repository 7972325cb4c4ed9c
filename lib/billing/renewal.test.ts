/** The renewal rule (renewal.ts): a payment never lowers what a key has. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_DIR, loadPlans } from '../config/index.ts';
import type { KeyRecord } from '../access/index.ts';
import { offeredChoice, paidRenewal, plansOnOffer } from './renewal.ts';

const plans = loadPlans(DEFAULT_CONFIG_DIR);
const key = (plan: KeyRecord['plan'], limits: Partial<KeyRecord> = {}): KeyRecord => ({
  prefix: 'trk_live_Ab3dE9x', hash: 'a'.repeat(64), mode: 'live', email: 'x@example.in', plan, status: 'active',
  period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z',
  lookups_limit: plans[plan].lookups, daily_quota: plans[plan].daily_quota, burst_per_second: plans[plan].burst_per_second,
  created_at: '2026-11-01T00:00:00.000Z', renewed_at: null, notices_sent: {}, ...limits,
});
const during = new Date('2026-11-20T00:00:00.000Z');
const after = new Date('2026-12-01T00:00:00.000Z');

describe('what a key may buy', () => {
  it('while the period runs: the same plan or a higher one; once it has ended, any', () => {
    expect(plansOnOffer(key('business'), plans, during)).toEqual(['business']);
    expect(plansOnOffer(key('growth'), plans, during)).toEqual(['growth', 'business']);
    expect(plansOnOffer(key('business'), plans, after)).toEqual(['starter', 'growth', 'business']);
    // A trial is below every plan for sale, ended or not.
    expect(plansOnOffer(key('trial'), plans, during)).toEqual(['starter', 'growth', 'business']);
  });

  it('the page chooses the plan the link asked for when on offer, else the cheapest on offer', () => {
    expect(offeredChoice('starter', ['business'])).toBe('business');
    expect(offeredChoice('business', ['growth', 'business'])).toBe('business');
    expect(offeredChoice(undefined, ['starter', 'growth'])).toBe('starter');
  });
});

describe('a paid renewal', () => {
  it('refuses a lower plan while the period runs (the downgrade of finding 1), allows it after', () => {
    expect(paidRenewal(key('business'), 'starter', plans, during)).toBeNull();
    expect(paidRenewal(key('business'), 'starter', plans, after)).toMatchObject({ plan: 'starter', lookups_limit: 1500, daily_quota: 300 });
  });

  it('on the same plan keeps every override and starts a new period', () => {
    const custom = key('business', { lookups_limit: 50_000, daily_quota: 9_000, burst_per_second: 40 });
    expect(paidRenewal(custom, 'business', plans, during)).toMatchObject({
      plan: 'business', lookups_limit: 50_000, daily_quota: 9_000, burst_per_second: 40, period_start: during.toISOString(), renewed_at: during.toISOString(),
    });
  });

  it('an upgrade takes the higher plan, keeping any override above it', () => {
    const custom = key('starter', { lookups_limit: 20_000 });
    expect(paidRenewal(custom, 'growth', plans, during)).toMatchObject({ plan: 'growth', lookups_limit: 20_000, daily_quota: 800, burst_per_second: 10 });
    expect(paidRenewal(key('trial'), 'starter', plans, during)).toMatchObject({ plan: 'starter', lookups_limit: 1500 });
  });
});
