import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../access/index.ts';
import { DEFAULT_CONFIG_DIR, loadPlans } from '../config/index.ts';
import { composeNotice, formatInr, formatPeriodEnd, paymentLink } from './compose.ts';

const plans = loadPlans(DEFAULT_CONFIG_DIR);

const base: KeyRecord = {
  prefix: 'trk_live_Ab3dE9x',
  hash: 'b'.repeat(64),
  mode: 'live',
  email: 'owner@example.com',
  plan: 'business',
  status: 'active',
  period_start: '2026-11-10T20:00:00.000Z',
  period_end: '2026-12-10T20:00:00.000Z',
  lookups_limit: 12000,
  daily_quota: 2400,
  burst_per_second: 20,
  created_at: '2026-11-10T20:00:00.000Z',
  renewed_at: null,
  notices_sent: {},
};

describe('composeNotice', () => {
  it('names plan, price in INR, period end and a payment link with prefix and plan', () => {
    const m = composeNotice(base, 'three_day', { paymentBaseUrl: 'https://pay.example.in', plans });
    expect(m.to).toBe('owner@example.com');
    expect(m.subject).toBe('Your Business plan for API key trk_live_Ab3dE9x ends in 3 days');
    expect(m.text).toContain('Plan: Business (₹3,000 for 30 days, 12,000 lookups)');
    expect(m.text).toContain('Period ends: 10 Dec 2026, 20:00 UTC (11 Dec 2026, 01:30 IST) — 2026-12-10T20:00:00.000Z');
    expect(m.text).toContain('https://pay.example.in/renew?key=trk_live_Ab3dE9x&plan=business');
    expect(m.text).toContain('never renew by themselves');
    expect(m.html).toContain('href="https://pay.example.in/renew?key=trk_live_Ab3dE9x&amp;plan=business"');
    expect(m.html).toContain('₹3,000');
    expect(m.headers).toEqual({ 'X-Key-Prefix': 'trk_live_Ab3dE9x', 'X-Notice': 'three_day' });
  });

  it('words the last-day notice differently', () => {
    const m = composeNotice({ ...base, plan: 'growth' }, 'last_day', { paymentBaseUrl: 'https://pay.example.in', plans });
    expect(m.subject).toBe('Last day: your Growth plan for API key trk_live_Ab3dE9x ends within 24 hours');
    expect(m.text).toContain('last day of your Growth plan');
    expect(m.text).toContain('₹999');
  });

  it('calls a trial free', () => {
    const m = composeNotice({ ...base, plan: 'trial', mode: 'test', prefix: 'trk_test_Zz9yY8x' }, 'three_day', { paymentBaseUrl: 'https://pay.example.in', plans });
    expect(m.text).toContain('Plan: Trial (free, 12,000 lookups)');
    expect(m.text).toContain('renew?key=trk_test_Zz9yY8x&plan=trial');
  });
});

describe('formatting', () => {
  it('keeps the path of the base URL, with or without a trailing slash', () => {
    expect(paymentLink('https://example.com/billing', base)).toBe('https://example.com/billing/renew?key=trk_live_Ab3dE9x&plan=business');
    expect(paymentLink('https://example.com/billing/', base)).toBe('https://example.com/billing/renew?key=trk_live_Ab3dE9x&plan=business');
  });

  it('groups rupees the Indian way and shows IST beside UTC', () => {
    expect(formatInr(399)).toBe('₹399');
    expect(formatInr(150000)).toBe('₹1,50,000');
    expect(formatPeriodEnd('2026-03-05T08:05:00.000Z')).toBe('5 Mar 2026, 08:05 UTC (13:35 IST)');
  });
});
