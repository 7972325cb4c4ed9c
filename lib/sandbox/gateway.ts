/**
 * The sandbox payment gateway: Razorpay's Payment Links API subset this service uses (create, list
 * by reference_id, fetch), with basic auth, plus the page a customer pays on. Its "Pay" button
 * completes the payment at once: it sends the signed `payment_link.paid` webhook (Razorpay's payload
 * shape and signature) to the registered URL, then redirects to the link's callback_url with the
 * signed query Razorpay adds. `npm start` serves one in process; tests start their own.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { request } from 'undici';
import { z } from 'zod';
import { signCallback, signWebhook } from '../billing/signature.ts';
import { escapeHtml } from '../html/index.ts';

const CreateSchema = z.object({
  amount: z.number().int().positive(),
  currency: z.literal('INR').default('INR'),
  reference_id: z.string().min(1).max(40),
  description: z.string().max(2048).optional(),
  notes: z.record(z.string(), z.string().max(256)).default({}),
  callback_url: z.string().url().optional(),
  callback_method: z.literal('get').optional(),
}).passthrough();

interface SandboxLink {
  id: string;
  amount: number;
  amount_paid: number;
  currency: string;
  reference_id: string;
  description: string;
  notes: Record<string, string>;
  callback_url: string | null;
  status: 'created' | 'paid';
  short_url: string;
  created_at: number;
  payment_id: string | null;
}

export interface WebhookDelivery {
  url: string;
  body: string;
  signature: string;
  status: number | null;
}

export interface SandboxGatewayOptions {
  /** Where `payment_link.paid` goes (Razorpay: the URL registered in the dashboard). */
  webhookUrl?: string | null;
  /** Epoch ms; default Date.now. */
  clock?: () => number;
}

export interface RunningGateway {
  url: string;
  keyId: string;
  keySecret: string;
  webhookSecret: string;
  /** Registers the webhook URL (as in Razorpay's dashboard). */
  setWebhookUrl(url: string): void;
  /** While down, every API call is answered 503 (the page's "gateway down" path). */
  setDown(down: boolean): void;
  /** Every webhook sent, in order, with its exact body and signature (tests deliver them again). */
  readonly deliveries: readonly WebhookDelivery[];
  /** Links created, oldest first. */
  links(): readonly SandboxLink[];
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(7).toString('base64url').replace(/[-_]/g, 'x')}`;


function payPage(link: SandboxLink): string {
  const rupees = (link.amount / 100).toLocaleString('en-IN', { maximumFractionDigits: 2 });
  const body = link.status === 'paid'
    ? '<p>This link has been paid.</p>'
    : `<form method="post" action="/pay/${escapeHtml(link.id)}"><button type="submit">Pay ₹${escapeHtml(rupees)}</button></form>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sandbox payment</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}button{font-size:1.1rem;padding:.6rem 1.2rem}</style></head>
<body><h1>Sandbox payment gateway</h1><p>No money moves here: this stands in for Razorpay.</p>
<p>${escapeHtml(link.description)}</p><p>Amount: <strong>₹${escapeHtml(rupees)}</strong></p>${body}</body></html>`;
}

/** The link fields a `payment_link.paid` event carries. */
export interface PaidLinkEntity {
  id: string;
  amount: number;
  currency: string;
  reference_id: string;
  description: string;
  notes: Record<string, string>;
}

/** A `payment_link.paid` event as Razorpay sends it, for a link paid in full by `paymentId` at `nowS`. */
export function paymentLinkPaidEvent(link: PaidLinkEntity, paymentId: string, nowS: number) {
  return {
    entity: 'event',
    account_id: 'acc_sandbox',
    event: 'payment_link.paid',
    contains: ['payment_link', 'order', 'payment'],
    payload: {
      payment_link: { entity: { ...link, entity: 'payment_link', accept_partial: false, amount_paid: link.amount, status: 'paid' } },
      order: {
        entity: {
          id: id('order'), entity: 'order', amount: link.amount, amount_paid: link.amount, amount_due: 0, currency: link.currency, receipt: link.reference_id,
          status: 'paid', notes: link.notes,
        },
      },
      payment: {
        entity: {
          id: paymentId, entity: 'payment', amount: link.amount, currency: link.currency, status: 'captured',
          method: 'upi', captured: true, description: link.description, notes: link.notes, created_at: nowS,
        },
      },
    },
    created_at: nowS,
  };
}

export async function startGatewaySandbox(options: SandboxGatewayOptions = {}): Promise<RunningGateway> {
  const clock = options.clock ?? Date.now;
  const keyId = `rzp_test_${randomBytes(7).toString('hex')}`;
  const keySecret = randomBytes(18).toString('base64url');
  const webhookSecret = randomBytes(18).toString('base64url');
  let webhookUrl = options.webhookUrl ?? null;
  let down = false;
  const links = new Map<string, SandboxLink>();
  const deliveries: WebhookDelivery[] = [];
  const app: FastifyInstance = Fastify({ logger: false });
  await app.register(formbody);
  let base = '';

  const authorised = (req: FastifyRequest) => req.headers.authorization === `Basic ${Buffer.from(`${keyId}:${keySecret}`).toString('base64')}`;
  const apiError = (reply: FastifyReply, status: number, description: string) =>
    reply.code(status).send({ error: { code: status === 401 ? 'BAD_REQUEST_ERROR' : status >= 500 ? 'SERVER_ERROR' : 'BAD_REQUEST_ERROR', description } });
  const view = (l: SandboxLink) => ({ ...l, entity: 'payment_link', accept_partial: false, payments: null });

  app.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/v1/')) return;
    if (down) return apiError(reply, 503, 'The sandbox gateway is down (setDown).');
    if (!authorised(req)) return apiError(reply, 401, 'The api key provided is invalid');
  });

  app.post('/v1/payment_links', async (req, reply) => {
    const parsed = CreateSchema.safeParse(req.body);
    if (!parsed.success) return apiError(reply, 400, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const b = parsed.data;
    if ([...links.values()].some((l) => l.reference_id === b.reference_id)) {
      return apiError(reply, 400, `Payment Link with reference id ${b.reference_id} already exists`);
    }
    const linkId = id('plink');
    const link: SandboxLink = {
      id: linkId, amount: b.amount, amount_paid: 0, currency: b.currency, reference_id: b.reference_id,
      description: b.description ?? '', notes: b.notes, callback_url: b.callback_url ?? null, status: 'created',
      short_url: `${base}/pay/${linkId}`, created_at: Math.floor(clock() / 1000), payment_id: null,
    };
    links.set(linkId, link);
    return view(link);
  });

  app.get<{ Querystring: { reference_id?: string } }>('/v1/payment_links', async (req) => ({
    payment_links: [...links.values()].filter((l) => !req.query.reference_id || l.reference_id === req.query.reference_id).map(view),
  }));

  app.get<{ Params: { id: string } }>('/v1/payment_links/:id', async (req, reply) => {
    const link = links.get(req.params.id);
    return link ? view(link) : apiError(reply, 400, 'The id provided does not exist');
  });

  app.get<{ Params: { id: string } }>('/pay/:id', async (req, reply) => {
    const link = links.get(req.params.id);
    if (!link) return reply.code(404).type('text/plain').send('No such payment link.');
    return reply.type('text/html; charset=utf-8').send(payPage(link));
  });

  /** Pay: the payment is captured, the webhook sent (its answer awaited), then the callback. */
  app.post<{ Params: { id: string } }>('/pay/:id', async (req, reply) => {
    const link = links.get(req.params.id);
    if (!link) return reply.code(404).type('text/plain').send('No such payment link.');
    if (link.status !== 'paid') {
      const now = Math.floor(clock() / 1000);
      link.status = 'paid';
      link.amount_paid = link.amount;
      link.payment_id = id('pay');
      const event = paymentLinkPaidEvent(view(link), link.payment_id, now);
      const body = JSON.stringify(event);
      const signature = signWebhook(body, webhookSecret);
      const delivery: WebhookDelivery = { url: webhookUrl ?? '', body, signature, status: null };
      deliveries.push(delivery);
      if (webhookUrl) {
        try {
          const res = await request(webhookUrl, {
            method: 'POST', body,
            headers: { 'content-type': 'application/json', 'x-razorpay-signature': signature, 'x-razorpay-event-id': id('evt') },
          });
          await res.body.text();
          delivery.status = res.statusCode;
        } catch {
          delivery.status = null;
        }
      }
    }
    if (!link.callback_url) return reply.type('text/html; charset=utf-8').send(payPage(link));
    const params = {
      razorpay_payment_id: link.payment_id!, razorpay_payment_link_id: link.id,
      razorpay_payment_link_reference_id: link.reference_id, razorpay_payment_link_status: 'paid',
    };
    const target = new URL(link.callback_url);
    for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
    target.searchParams.set('razorpay_signature', signCallback(params, keySecret));
    return reply.redirect(target.toString(), 303);
  });

  app.get('/healthz', async () => ({ ok: true }));

  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    url: base, keyId, keySecret, webhookSecret, deliveries,
    setWebhookUrl(url) { webhookUrl = url; },
    setDown(value) { down = value; },
    links: () => [...links.values()],
    close: () => app.close(),
  };
}
