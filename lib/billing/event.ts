/**
 * The `payment_link.paid` webhook event (Razorpay's payload shape), read once its signature was
 * checked. Pure. Only the fields this service acts on are required; the rest passes.
 */
import { z } from 'zod';
import { PLAN_NAMES, type PlanName } from '../config/index.ts';

const NotesSchema = z.record(z.string(), z.unknown()).or(z.array(z.unknown())).optional();

export const PaymentLinkPaidEventSchema = z.object({
  entity: z.literal('event'),
  event: z.literal('payment_link.paid'),
  payload: z.object({
    payment_link: z.object({
      entity: z.object({
        id: z.string().min(1),
        amount: z.number().int().nonnegative(),
        amount_paid: z.number().int().nonnegative(),
        reference_id: z.string().nullish(),
        status: z.string(),
        notes: NotesSchema,
      }),
    }),
    payment: z.object({
      entity: z.object({
        id: z.string().regex(/^pay_[A-Za-z0-9]+$/),
        amount: z.number().int().nonnegative(),
        currency: z.string().default('INR'),
        status: z.string(),
        created_at: z.number().int().optional(),
      }),
    }),
  }),
  created_at: z.number().int(),
});

/** Any event: only its name is read before deciding whether to act. */
export const AnyEventSchema = z.object({ entity: z.literal('event'), event: z.string() });

/** What the service takes from a paid link. */
export interface PaidLink {
  payment_id: string;
  link_id: string;
  reference_id: string | null;
  /** Paid, in paise. */
  amount_paise: number;
  currency: string;
  /** The gateway's payment status (`captured` for a completed payment). */
  status: string;
  /** From the link's notes, as the renewal page created it; null when absent or not a key/plan. */
  key_prefix: string | null;
  plan: PlanName | null;
  /** The payment's time (epoch seconds), else the event's. */
  paid_at_s: number;
}

function note(notes: unknown, name: string): string | null {
  if (!notes || Array.isArray(notes) || typeof notes !== 'object') return null;
  const value = (notes as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : null;
}

export function paidLinkOf(event: z.infer<typeof PaymentLinkPaidEventSchema>): PaidLink {
  const link = event.payload.payment_link.entity;
  const payment = event.payload.payment.entity;
  const plan = note(link.notes, 'plan');
  return {
    payment_id: payment.id,
    link_id: link.id,
    reference_id: link.reference_id ?? null,
    amount_paise: payment.amount,
    currency: payment.currency,
    status: payment.status,
    key_prefix: note(link.notes, 'key_prefix'),
    plan: plan !== null && (PLAN_NAMES as readonly string[]).includes(plan) ? plan as PlanName : null,
    paid_at_s: payment.created_at ?? event.created_at,
  };
}
