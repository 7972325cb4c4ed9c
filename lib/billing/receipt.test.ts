import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../access/index.ts';
import type { PaymentRecord } from './payments.ts';
import { composeReceipt } from './receipt.ts';

const key: KeyRecord = {
  prefix: 'trk_live_Ab3dE9x', hash: 'b'.repeat(64), mode: 'live', email: 'owner@example.com', plan: 'growth', status: 'active',
  period_start: '2026-11-26T10:00:00.000Z', period_end: '2026-12-26T10:00:00.000Z', lookups_limit: 4000, daily_quota: 800,
  burst_per_second: 10, created_at: '2026-11-01T10:00:00.000Z', renewed_at: '2026-11-26T10:00:00.000Z', notices_sent: {},
};
const payment: PaymentRecord = {
  id: 'pay_Rc0000000001', key_prefix: key.prefix, plan: 'growth', amount_paise: 99_900, currency: 'INR', status: 'captured',
  paid_at: '2026-11-26T10:00:00.000Z', link_id: 'plink_1', reference_id: 'rn_1', gateway: 'razorpay', applied: true, reason: null,
  state: 'settled', lease_until: 0,
};

describe('receipt e-mail', () => {
  it('says what was paid and until when the key now runs, to the key owner, naming the key by prefix', () => {
    const m = composeReceipt(payment, key);
    expect(m.to).toBe('owner@example.com');
    expect(m.subject).toBe('Payment received: API key trk_live_Ab3dE9x renewed on the Growth plan');
    expect(m.text).toContain('We received ₹999 (payment pay_Rc0000000001)');
    expect(m.text).toContain('until 26 Dec 2026, 10:00 UTC (15:30 IST), with 4,000 lookups');
    expect(m.headers).toEqual({ 'X-Key-Prefix': 'trk_live_Ab3dE9x', 'X-Payment-Id': 'pay_Rc0000000001' });
  });

  it('says why a payment was not applied and what happens next', () => {
    const m = composeReceipt({ ...payment, amount_paise: 39_800, applied: false, reason: 'amount_mismatch' }, key);
    expect(m.subject).toBe('Payment received for API key trk_live_Ab3dE9x, not applied yet');
    expect(m.text).toContain('We received ₹398');
    expect(m.text).toContain('the amount paid is not the price of the plan');
    expect(m.html).toContain('support will apply or refund it');
  });
});
