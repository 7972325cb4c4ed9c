/**
 * The payment gateway: Razorpay Payment Links over its documented HTTP API (basic auth with the
 * key id and secret, JSON, amounts in paise). The sandbox gateway (lib/sandbox/gateway.ts) speaks
 * the same subset, so one client serves both.
 */
import { request } from 'undici';
import { z } from 'zod';
import type { PlanName } from '../config/index.ts';

export const RAZORPAY_API_URL = 'https://api.razorpay.com';

export interface CreateLinkRequest {
  amount_paise: number;
  /** Unique per attempt of the renewal page: the gateway refuses a second link with it. */
  reference_id: string;
  description: string;
  notes: { key_prefix: string; plan: PlanName };
  callback_url: string;
  /** Prefilled where the gateway allows; never required. */
  customer_email?: string;
}

export interface CreatedLink {
  id: string;
  short_url: string;
  reference_id: string;
}

/** The gateway could not be reached or failed (network, timeout, 5xx): nothing was created that we know of. */
export class GatewayUnavailable extends Error {
  override name = 'GatewayUnavailable';
}

/** The gateway refused the request (4xx other than a duplicate reference): a configuration problem. */
export class GatewayRefused extends Error {
  override name = 'GatewayRefused';
}

export interface GatewayCredentials {
  /** `https://api.razorpay.com`, or a sandbox gateway's URL. */
  apiUrl: string;
  keyId: string;
  keySecret: string;
  webhookSecret: string;
}

export interface PaymentGateway {
  /** `razorpay` or `sandbox`, kept with each payment. */
  readonly name: 'razorpay' | 'sandbox';
  readonly credentials: GatewayCredentials;
  /** Origins a browser is sent to to pay (the renewal page's form-action allows them). */
  readonly checkoutOrigins: readonly string[];
  createLink(link: CreateLinkRequest): Promise<CreatedLink>;
  /** The link created with `referenceId`, or null. */
  findByReference(referenceId: string): Promise<CreatedLink | null>;
}

const LinkSchema = z.object({ id: z.string().min(1), short_url: z.string().url(), reference_id: z.string().nullish() });
const LinkListSchema = z.object({ payment_links: z.array(LinkSchema) });

const TIMEOUT_MS = 10_000;

/** Razorpay Payment Links (or the sandbox gateway, same API, other URL). */
export class RazorpayGateway implements PaymentGateway {
  readonly credentials: GatewayCredentials;
  readonly name: 'razorpay' | 'sandbox';
  readonly checkoutOrigins: readonly string[];
  constructor(
    credentials: GatewayCredentials,
    name: 'razorpay' | 'sandbox' = 'razorpay',
    checkoutOrigins: readonly string[] = ['https://rzp.io', 'https://razorpay.com', 'https://*.razorpay.com'],
  ) {
    this.credentials = credentials;
    this.name = name;
    this.checkoutOrigins = checkoutOrigins;
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const auth = Buffer.from(`${this.credentials.keyId}:${this.credentials.keySecret}`).toString('base64');
    try {
      const res = await request(new URL(path, this.credentials.apiUrl), {
        method,
        headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json', accept: 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
      });
      const text = await res.body.text();
      if (res.statusCode >= 500) throw new GatewayUnavailable(`payment gateway answered HTTP ${res.statusCode}`);
      let json: unknown = null;
      try { json = JSON.parse(text); } catch { json = null; }
      return { status: res.statusCode, json };
    } catch (err) {
      if (err instanceof GatewayUnavailable) throw err;
      throw new GatewayUnavailable(`payment gateway unreachable: ${(err as Error).message}`);
    }
  }

  async createLink(link: CreateLinkRequest): Promise<CreatedLink> {
    const { status, json } = await this.call('POST', '/v1/payment_links', {
      amount: link.amount_paise,
      currency: 'INR',
      accept_partial: false,
      reference_id: link.reference_id,
      description: link.description,
      ...(link.customer_email ? { customer: { email: link.customer_email } } : {}),
      notify: { sms: false, email: false },
      reminder_enable: false,
      notes: link.notes,
      callback_url: link.callback_url,
      callback_method: 'get',
    });
    if (status === 200) return this.linkOf(json, link.reference_id);
    // A retry of an attempt whose first answer was lost: the gateway keeps one link per reference.
    if (status === 400) {
      const existing = await this.findByReference(link.reference_id);
      if (existing) return existing;
    }
    throw new GatewayRefused(`payment gateway refused the link (HTTP ${status}): ${JSON.stringify(json)}`);
  }

  async findByReference(referenceId: string): Promise<CreatedLink | null> {
    const { status, json } = await this.call('GET', `/v1/payment_links?reference_id=${encodeURIComponent(referenceId)}`);
    if (status !== 200) throw new GatewayRefused(`payment gateway refused the link search (HTTP ${status})`);
    const parsed = LinkListSchema.safeParse(json);
    if (!parsed.success) throw new GatewayUnavailable('payment gateway answered an unexpected link list');
    const found = parsed.data.payment_links.find((l) => l.reference_id === referenceId);
    return found ? { id: found.id, short_url: found.short_url, reference_id: referenceId } : null;
  }

  private linkOf(json: unknown, referenceId: string): CreatedLink {
    const parsed = LinkSchema.safeParse(json);
    if (!parsed.success) throw new GatewayUnavailable('payment gateway answered an unexpected link');
    return { id: parsed.data.id, short_url: parsed.data.short_url, reference_id: referenceId };
  }
}
