import { describe, expect, it } from 'vitest';
import { paymentLinkPaidEvent } from '../sandbox/gateway.ts';
import { PaymentLinkPaidEventSchema, paidLinkOf } from './event.ts';

const link = { id: 'plink_Ev00000001', amount: 39_900, currency: 'INR', reference_id: 'rn_eventeventeventev', description: 'd', notes: { key_prefix: 'trk_test_Ab3dE9x', plan: 'starter' } };

describe('payment_link.paid', () => {
  it('takes the payment, the link and the key prefix and plan from its notes', () => {
    const event = PaymentLinkPaidEventSchema.parse(JSON.parse(JSON.stringify(paymentLinkPaidEvent(link, 'pay_Ev0000000001', 1_790_000_000))));
    expect(paidLinkOf(event)).toEqual({
      payment_id: 'pay_Ev0000000001', link_id: 'plink_Ev00000001', reference_id: 'rn_eventeventeventev', amount_paise: 39_900,
      currency: 'INR', status: 'captured', key_prefix: 'trk_test_Ab3dE9x', plan: 'starter', paid_at_s: 1_790_000_000,
    });
  });

  it('reads a plan it does not know, or notes Razorpay sends as an empty array, as none', () => {
    const unknownPlan = PaymentLinkPaidEventSchema.parse(paymentLinkPaidEvent({ ...link, notes: { key_prefix: 'trk_test_Ab3dE9x', plan: 'platinum' } }, 'pay_Ev0000000002', 1));
    expect(paidLinkOf(unknownPlan).plan).toBeNull();
    const raw = paymentLinkPaidEvent(link, 'pay_Ev0000000003', 1) as unknown as { payload: { payment_link: { entity: { notes: unknown } } } };
    raw.payload.payment_link.entity.notes = [];
    expect(paidLinkOf(PaymentLinkPaidEventSchema.parse(raw))).toMatchObject({ key_prefix: null, plan: null });
  });

  it('refuses another event or a payment without an id', () => {
    expect(PaymentLinkPaidEventSchema.safeParse({ ...paymentLinkPaidEvent(link, 'pay_Ev0000000004', 1), event: 'payment_link.cancelled' }).success).toBe(false);
    expect(PaymentLinkPaidEventSchema.safeParse(paymentLinkPaidEvent(link, 'nope', 1)).success).toBe(false);
  });
});
