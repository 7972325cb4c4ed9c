/**
 * The three channels, each through its provider's real API (buyer-channels.md §1, §2, §6):
 * - WhatsApp: Meta's Cloud API, `POST /<version>/<phone number id>/messages`, an approved UTILITY
 *   template by name and language; the notice id rides in `biz_opaque_callback_data`, which Meta
 *   returns in the status webhooks.
 * - SMS: MSG91's Flow API, `POST /api/v5/flow` with the DLT-mapped template id and its variables.
 * - E-mail: SMTP (nodemailer), with RFC 8058 one-click unsubscribe headers.
 * The sandbox providers (lib/sandbox/messaging.ts) speak the same APIs at other URLs.
 *
 * What a failure reports is a code (HTTP status, the provider's error code), never the provider's
 * message text: some echo the number they refused, and errors are logged and listed.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import { request } from 'undici';
import type { NoticeTemplates } from '../config/index.ts';
import type { Lang } from '../tracking-page/types.ts';
import type { Contact, NoticeChannel } from './contact.ts';
import type { NoticeKind } from './kinds.ts';
import { emailOf, smsTemplate, whatsappTemplate, type NoticeValues } from './templates.ts';

export interface ChannelMessage {
  noticeId: string;
  /** What the provider echoes in its status webhooks: `prefix|noticeId` (WhatsApp's biz_opaque_callback_data). */
  reference: string;
  kind: NoticeKind;
  lang: Lang;
  values: NoticeValues;
  contact: Contact;
  /** The e-mail's one-click unsubscribe URL (an opaque token naming the key and the address). */
  unsubscribeUrl: string;
}

export type SendOutcome = { ok: true; providerId: string } | { ok: false; permanent: boolean; error: string };

export interface NoticeChannelClient {
  readonly channel: NoticeChannel;
  send(message: ChannelMessage): Promise<SendOutcome>;
  close(): Promise<void>;
}

const TIMEOUT_MS = 10_000;
/**
 * Meta's codes that pass (throughput, too many messages to this user, an unknown error): tried again
 * on WhatsApp. Any other refusal (131026 not on WhatsApp, a template problem, a bad parameter) will
 * not go through there: the next channel is tried.
 */
const WHATSAPP_RETRY = new Set([130429, 131000, 131056]);

const transient = (status: number) => status === 429 || status >= 500;

export interface WhatsAppOptions {
  /** `https://graph.facebook.com` or a sandbox's URL. */
  apiUrl: string;
  /** Pinned Graph API version, e.g. `v23.0`. */
  version: string;
  phoneNumberId: string;
  accessToken: string;
  templates: NoticeTemplates;
}

export class WhatsAppChannel implements NoticeChannelClient {
  readonly channel = 'whatsapp' as const;
  private readonly options: WhatsAppOptions;
  constructor(options: WhatsAppOptions) {
    this.options = options;
  }

  async send(m: ChannelMessage): Promise<SendOutcome> {
    if (!m.contact.phone) return { ok: false, permanent: true, error: 'no phone' };
    const o = this.options;
    try {
      const res = await request(`${o.apiUrl}/${o.version}/${o.phoneNumberId}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${o.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          messaging_product: 'whatsapp', recipient_type: 'individual', to: m.contact.phone.slice(1), type: 'template',
          template: whatsappTemplate(o.templates, m.kind, m.lang, m.values), biz_opaque_callback_data: m.reference,
        }),
        headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
      });
      const body = await res.body.json().catch(() => null) as { messages?: { id?: string }[]; error?: { code?: number } } | null;
      const id = body?.messages?.[0]?.id;
      if (res.statusCode >= 200 && res.statusCode < 300 && id) return { ok: true, providerId: id };
      const code = body?.error?.code;
      const permanent = !transient(res.statusCode) && !(code !== undefined && WHATSAPP_RETRY.has(code));
      return { ok: false, permanent, error: `whatsapp HTTP ${res.statusCode}${code ? ` code ${code}` : ''}` };
    } catch (err) {
      return { ok: false, permanent: false, error: `whatsapp ${(err as { code?: string }).code ?? 'request failed'}` };
    }
  }

  async close(): Promise<void> {}
}

export interface Msg91Options {
  /** `https://control.msg91.com` or a sandbox's URL. */
  apiUrl: string;
  authKey: string;
  templates: NoticeTemplates;
}

export class Msg91SmsChannel implements NoticeChannelClient {
  readonly channel = 'sms' as const;
  private readonly options: Msg91Options;
  constructor(options: Msg91Options) {
    this.options = options;
  }

  async send(m: ChannelMessage): Promise<SendOutcome> {
    if (!m.contact.phone) return { ok: false, permanent: true, error: 'no phone' };
    const { templateId, variables } = smsTemplate(this.options.templates, m.kind, m.lang, m.values);
    try {
      const res = await request(`${this.options.apiUrl}/api/v5/flow`, {
        method: 'POST',
        headers: { authkey: this.options.authKey, 'content-type': 'application/json', accept: 'application/json' },
        // Unicode for the Indian scripts; no URL shortening (DLT whitelists the link's own domain).
        body: JSON.stringify({
          template_id: templateId, sender: this.options.templates.dlt.sender, short_url: '0', unicode: m.lang === 'en' ? 0 : 1,
          recipients: [{ mobiles: m.contact.phone.slice(1), ...variables }],
        }),
        headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
      });
      const body = await res.body.json().catch(() => null) as { type?: string; message?: string } | null;
      if (res.statusCode >= 200 && res.statusCode < 300 && body?.type === 'success' && body.message) return { ok: true, providerId: body.message };
      return { ok: false, permanent: !transient(res.statusCode), error: `sms HTTP ${res.statusCode}${body?.type ? ` ${body.type}` : ''}` };
    } catch (err) {
      return { ok: false, permanent: false, error: `sms ${(err as { code?: string }).code ?? 'request failed'}` };
    }
  }

  async close(): Promise<void> {}
}

export interface EmailOptions {
  /** `smtp://…` or `smtps://…`. */
  smtpUrl: string;
  from: string;
}

export class EmailChannel implements NoticeChannelClient {
  readonly channel = 'email' as const;
  private readonly transport: Transporter;
  constructor(options: EmailOptions) {
    const connection = { url: options.smtpUrl, connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: 30_000 };
    this.transport = nodemailer.createTransport(connection as never, { from: options.from });
  }

  async send(m: ChannelMessage): Promise<SendOutcome> {
    if (!m.contact.email) return { ok: false, permanent: true, error: 'no e-mail' };
    const mail = emailOf(m.kind, m.lang, m.values, m.unsubscribeUrl);
    try {
      const info = await this.transport.sendMail({
        to: m.contact.email, subject: mail.subject, text: mail.text, html: mail.html,
        // The notice id names the message, so a resend after a crash carries the same Message-ID.
        messageId: `<${m.noticeId}@notices.tracking>`,
        headers: { 'List-Unsubscribe': `<${m.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click', 'X-Notice-Id': m.noticeId },
      });
      return { ok: true, providerId: String(info.messageId) };
    } catch (err) {
      const code = (err as { responseCode?: number; code?: string }).responseCode;
      return { ok: false, permanent: typeof code === 'number' && code >= 500, error: `email ${code ?? (err as { code?: string }).code ?? 'failed'}` };
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
