/**
 * Billing as the API uses it: which gateway a key pays through, the webhook's signature check over
 * the raw body (against each configured gateway's secret), and settling a paid link.
 */
import type { AccessStore, KeyMode, KeyRecord } from '../access/index.ts';
import type { Plans } from '../config/index.ts';
import type { Mailer } from '../notices/index.ts';
import type { PaidLink } from './event.ts';
import type { PaymentGateway } from './gateway.ts';
import type { PaymentStore } from './payments.ts';
import { settlePaidLink, type PaymentReport, type SettleOutcome } from './settle.ts';
import { webhookSignatureValid } from './signature.ts';

export interface BillingOptions {
  access: AccessStore;
  payments: PaymentStore;
  plans: Plans;
  /** Live keys' gateway: Razorpay when configured (the embedded default falls back to the sandbox). */
  live: PaymentGateway | null;
  /** Test keys' gateway: the sandbox. */
  test: PaymentGateway | null;
  mailer: Mailer | null;
  report: PaymentReport | null;
  clock: () => number;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** A key was renewed by a payment: what an admin renew also triggers (push catch-up). */
  onRenewed?: (key: KeyRecord) => Promise<void>;
}

export class Billing {
  readonly payments: PaymentStore;
  readonly plans: Plans;

  private readonly options: BillingOptions;
  constructor(options: BillingOptions) {
    this.options = options;
    this.payments = options.payments;
    this.plans = options.plans;
  }

  gatewayFor(mode: KeyMode): PaymentGateway | null {
    return mode === 'live' ? this.options.live : this.options.test;
  }

  private gateways(): PaymentGateway[] {
    return [this.options.live, this.options.test].filter((g, i, all): g is PaymentGateway => g !== null && all.indexOf(g) === i);
  }

  /** The gateway whose webhook secret signed `rawBody`, or null (wrong, missing or none configured). */
  verifyWebhook(rawBody: Buffer, signature: string | undefined): PaymentGateway | null {
    return this.gateways().find((g) => webhookSignatureValid(rawBody, signature, g.credentials.webhookSecret)) ?? null;
  }

  settle(paid: PaidLink, gateway: PaymentGateway): Promise<SettleOutcome> {
    const { access, payments, plans, mailer, report, clock, log, onRenewed } = this.options;
    return settlePaidLink(paid, gateway.name, {
      access, payments, plans, mailer, report, clock, log, onRenewed,
      gatewayOf: (mode) => this.gatewayFor(mode)?.name ?? null,
    });
  }

  async close(): Promise<void> {
    await this.options.payments.close();
  }
}
