import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isKeyPrefix, type KeyRecord } from '../../../lib/access/index.ts';
import {
  AnyEventSchema, GatewayUnavailable, PaymentLinkPaidEventSchema, callbackSignatureValid, offeredChoice, paidLinkOf,
  plansOnOffer, pricePaise, purchasablePlans, type PaymentGateway,
} from '../../../lib/billing/index.ts';
import { PLAN_NAMES } from '../../../lib/config/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { donePage, noPaymentPage, noRenewalPage, renewPage } from '../pages/billing.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { requireAdmin } from '../auth/admin-token.ts';
import { adminCall } from '../openapi/spec.ts';
import { publicBaseOf } from '../context/public-base.ts';

/** What these routes use of the API's dependencies. */
type BillingDeps = Pick<ApiDeps, 'access' | 'adminToken' | 'billing' | 'clock' | 'product' | 'publicBaseUrl' | 'throttle'>;

const KeyPrefixSchema = z.string().refine(isKeyPrefix, 'a key prefix: trk_live_ or trk_test_ and 7 letters or digits');
/** An attempt's reference id (Razorpay allows 40 characters). */
const AttemptSchema = z.string().regex(/^rn_[A-Za-z0-9_-]{16,32}$/, 'an attempt reference from the renewal page');

export const RenewQuerySchema = z.object({ key: KeyPrefixSchema, plan: z.enum(PLAN_NAMES).optional() });
export const RenewFormSchema = z.object({ key: KeyPrefixSchema, plan: z.enum(PLAN_NAMES), attempt: AttemptSchema });
export const CallbackQuerySchema = z.object({
  razorpay_payment_id: z.string().min(1).max(64),
  razorpay_payment_link_id: z.string().min(1).max(64),
  razorpay_payment_link_reference_id: AttemptSchema,
  razorpay_payment_link_status: z.string().min(1).max(32),
  razorpay_signature: z.string().min(1).max(128),
});
export const PaymentsQuerySchema = z.object({ key: KeyPrefixSchema });
export const WebhookAnswerSchema = z.object({ received: z.literal(true), outcome: z.enum(['applied', 'not_applied', 'duplicate', 'ignored']) });
export const PaymentViewSchema = z.object({
  id: z.string(), plan: z.enum(PLAN_NAMES).nullable(), amount_inr: z.number(), status: z.string(), paid_at: z.string(),
  applied: z.boolean(), reason: z.string().nullable(),
});
export const PaymentsAnswerSchema = z.object({ key_prefix: z.string(), payments: z.array(PaymentViewSchema) });

function parsed<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value ?? {});
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.') || what}: ${i.message}`).join('; ');
    throw new ApiError('bad_request', `Invalid ${what}: ${issues}`);
  }
  return result.data;
}

const newAttempt = () => `rn_${randomBytes(18).toString('base64url')}`;

/** The renewal page posts here and is then sent to the gateway: its form-action must allow both. */
function allowGatewayForms(reply: FastifyReply, gateway: PaymentGateway): void {
  reply.header('x-billing-form-action', ['\'self\'', ...gateway.checkoutOrigins].join(' '));
}

/**
 * Paying (contracts.md "Paying: renewal and upgrade"): the renewal page opened from the notice
 * e-mail, the payment link it creates at the gateway, the gateway's callback page and signed
 * webhook, and the operators' list of a key's payments.
 */
export function registerBillingRoutes(app: FastifyInstance, deps: BillingDeps): void {
  const { access, billing } = deps;
  const plans = deps.product.config.plans;
  const buyable = purchasablePlans(plans);
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(body);

  /**
   * The key behind a renewal request, or the one page every key that cannot pay gets: unknown,
   * revoked and suspended prefixes are answered alike (same status, same words), so the page tells
   * a stranger holding a prefix nothing about the key. A suspended key is refused because a
   * renewal keeps a suspension (lib/access): taking money would mislead.
   */
  async function payableKey(prefix: string, reply: FastifyReply): Promise<{ key: KeyRecord; gateway: PaymentGateway } | null> {
    const key = await access.getByPrefix(prefix);
    if (!key || key.status !== 'active') {
      html(reply, 404, noRenewalPage(prefix));
      return null;
    }
    const gateway = billing.gatewayFor(key.mode);
    if (!gateway || plansOnOffer(key, plans, new Date(deps.clock())).length === 0) {
      // Depends on the mode only, which the prefix itself shows (trk_live_ / trk_test_), or on a
      // plans file with no plan for sale.
      html(reply, 503, noPaymentPage(
        'Online payment is not available',
        `Online payment is not set up for ${key.mode} keys on this service. Contact support to renew ${prefix}.`,
      ));
      return null;
    }
    return { key, gateway };
  }

  app.register(async (pages) => {
    await pages.register(formbody);
    // The page's CSP (hardening.ts) lets forms post only here; the renewal form's answer then sends
    // the browser on to the gateway, which form-action governs too (redirects count). Widened for
    // the gateway's own origins only, on these pages only.
    pages.addHook('onSend', async (_request, reply, payload) => {
      const allowed = reply.getHeader('x-billing-form-action');
      if (typeof allowed === 'string') {
        reply.removeHeader('x-billing-form-action');
        const csp = reply.getHeader('content-security-policy');
        if (typeof csp === 'string') reply.header('content-security-policy', csp.replace("form-action 'self'", `form-action ${allowed}`));
      }
      return payload;
    });

    pages.get('/billing/renew', async (request, reply) => {
      const query = parsed(RenewQuerySchema, request.query, 'renewal link');
      const payable = await payableKey(query.key, reply);
      if (!payable) return reply;
      const offer = plansOnOffer(payable.key, plans, new Date(deps.clock()));
      allowGatewayForms(reply, payable.gateway);
      return html(reply, 200, renewPage({ prefix: payable.key.prefix, plans, offer, selected: offeredChoice(query.plan, offer)!, attempt: newAttempt() }));
    });

    pages.post('/billing/renew', async (request, reply) => {
      const form = parsed(RenewFormSchema, request.body, 'renewal form');
      if (!buyable.includes(form.plan)) throw new ApiError('bad_request', `The ${form.plan} plan cannot be bought; choose one of ${buyable.join(', ')}.`);
      const payable = await payableKey(form.key, reply);
      if (!payable) return reply;
      const { key, gateway } = payable;
      allowGatewayForms(reply, gateway);
      const offer = plansOnOffer(key, plans, new Date(deps.clock()));
      if (!offer.includes(form.plan)) {
        // A lower plan while the period runs (renewal.ts): the form again, with what can be bought.
        return html(reply, 409, renewPage({
          prefix: key.prefix, plans, offer, selected: offer[0]!, attempt: form.attempt,
          problem: `The ${form.plan} plan cannot be bought for this key while its period runs: `
            + 'a payment renews the key on its plan or upgrades it, and a lower plan can be chosen once the period has ended.',
        }));
      }

      // One attempt, one link: a second submit (double click, reload, retry after an outage) goes
      // to the link already made for it, never to a second one.
      const kept = await billing.payments.getAttempt(form.attempt);
      if (kept) {
        if (kept.key_prefix !== key.prefix || kept.plan !== form.plan) {
          throw new ApiError('conflict', 'This renewal form was already used for another plan; open the renewal link again.');
        }
        return reply.header('Cache-Control', 'no-store').redirect(kept.short_url, 303);
      }
      const base = publicBaseOf(deps, request.server);
      try {
        const link = await gateway.createLink({
          amount_paise: pricePaise(form.plan, plans),
          reference_id: form.attempt,
          description: `Tracking API ${form.plan} plan for key ${key.prefix}`,
          notes: { key_prefix: key.prefix, plan: form.plan },
          callback_url: `${base}/billing/renew/done`,
          customer_email: key.email,
        });
        const saved = await billing.payments.saveAttempt({
          reference_id: form.attempt, link_id: link.id, short_url: link.short_url, key_prefix: key.prefix, plan: form.plan,
        });
        return reply.header('Cache-Control', 'no-store').redirect(saved.short_url, 303);
      } catch (err) {
        request.log.warn({ err: { message: (err as Error).message } }, 'billing: payment link not created');
        const problem = err instanceof GatewayUnavailable
          ? 'The payment service could not be reached, so nothing was charged. '
            + 'Try again in a few minutes: this button reuses the same payment attempt, so you cannot be charged twice.'
          : 'The payment service refused to start this payment; nothing was charged. Please contact support.';
        return html(reply, err instanceof GatewayUnavailable ? 503 : 502, renewPage({
          prefix: key.prefix, plans, offer, selected: form.plan, attempt: form.attempt, problem,
        }));
      }
    });

    // Where the gateway sends the customer back; the webhook, not this page, renews the key.
    pages.get('/billing/renew/done', async (request, reply) => {
      const query = parsed(CallbackQuerySchema, request.query, 'payment callback');
      const attempt = await billing.payments.getAttempt(query.razorpay_payment_link_reference_id);
      const key = attempt ? await access.getByPrefix(attempt.key_prefix) : null;
      const gateway = key ? billing.gatewayFor(key.mode) : null;
      if (!attempt || !key || !gateway || attempt.link_id !== query.razorpay_payment_link_id
        || !callbackSignatureValid(query, query.razorpay_signature, gateway.credentials.keySecret)) {
        throw new ApiError('invalid_signature', 'This payment confirmation link is not valid.');
      }
      const payment = (await billing.payments.listByKey(key.prefix)).find((p) => p.id === query.razorpay_payment_id);
      const state = payment?.state !== 'settled' ? 'pending' : payment.applied ? 'renewed' : 'not_applied';
      return html(reply, 200, donePage(key, query.razorpay_payment_id, state));
    });

    methodNotAllowed(pages, '/billing/renew', ['GET', 'POST']);
    methodNotAllowed(pages, '/billing/renew/done', ['GET']);
  });

  // The webhook reads its body as raw bytes (the signature is over them): a parser for this
  // context only, so every other route keeps its own.
  app.register(async (hook) => {
    hook.removeAllContentTypeParsers();
    hook.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    hook.post('/billing/razorpay/webhook', async (request: FastifyRequest, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['x-razorpay-signature'];
      const gateway = billing.verifyWebhook(raw, typeof signature === 'string' ? signature : undefined);
      if (!gateway) throw new ApiError('invalid_signature', 'Missing or wrong X-Razorpay-Signature: the body must be signed with the webhook secret.');

      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new ApiError('bad_request', 'The webhook body is not JSON.');
      }
      const any = parsed(AnyEventSchema, json, 'webhook event');
      if (any.event !== 'payment_link.paid') return { received: true, outcome: 'ignored' };
      const event = parsed(PaymentLinkPaidEventSchema, json, 'payment_link.paid event');
      const outcome = await billing.settle(paidLinkOf(event), gateway);
      // Another instance holds this payment right now: a non-2xx makes the gateway deliver it again later.
      if (outcome.kind === 'in_progress') {
        throw new ApiError('payment_in_progress', 'This payment is being applied by another request; deliver it again later.');
      }
      return reply.code(200).send({ received: true, outcome: outcome.kind });
    });

    methodNotAllowed(hook, '/billing/razorpay/webhook', ['POST']);
  });

  app.register(async (admin) => {
    admin.addHook('onRequest', async (request, reply) => {
      await requireAdmin(request, deps.adminToken, deps.throttle, deps.clock());
      reply.header('Cache-Control', 'no-store');
    });

    admin.get('/admin/payments', adminCall({
      operationId: 'listPayments', summary: 'A key\'s payments, newest first', query: PaymentsQuerySchema,
      responses: { 200: { description: 'The payments', schema: PaymentsAnswerSchema } },
      errors: ['bad_request'],
    }), async (request) => {
      const { key } = parsed(PaymentsQuerySchema, request.query, 'query');
      const payments = await billing.payments.listByKey(key);
      return {
        key_prefix: key,
        payments: payments.map((p) => ({
          id: p.id, plan: p.plan, amount_inr: p.amount_paise / 100, status: p.status, paid_at: p.paid_at,
          applied: p.applied, reason: p.state === 'pending' ? 'in_progress' : p.reason,
        })),
      };
    });

    methodNotAllowed(admin, '/admin/payments', ['GET']);
  });
}
