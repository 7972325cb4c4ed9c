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
const accepted = (status: number) => status >= 200 && status < 300;

/** A provider's JSON API call: its status and parsed answer (null when not JSON), or a network failure's code. */
async function postJson<T>(url: string, headers: Record<string, string>, payload: unknown): Promise<{ status: number; body: T | null } | { failed: string }> {
  try {
    const res = await request(url, {
      method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(payload),
      headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
    });
    return { status: res.statusCode, body: await res.body.json().catch(() => null) as T | null };
  } catch (err) {
    return { failed: (err as { code?: string }).code ?? 'request failed' };
  }
}

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
    const res = await postJson<{ messages?: { id?: string }[]; error?: { code?: number } }>(
      `${o.apiUrl}/${o.version}/${o.phoneNumberId}/messages`, { authorization: `Bearer ${o.accessToken}` },
      {
        messaging_product: 'whatsapp', recipient_type: 'individual', to: m.contact.phone.slice(1), type: 'template',
        template: whatsappTemplate(o.templates, m.kind, m.lang, m.values), biz_opaque_callback_data: m.reference,
      },
    );
    if ('failed' in res) return { ok: false, permanent: false, error: `whatsapp ${res.failed}` };
    const id = res.body?.messages?.[0]?.id;
    if (accepted(res.status) && id) return { ok: true, providerId: id };
    const code = res.body?.error?.code;
    const permanent = !transient(res.status) && !(code !== undefined && WHATSAPP_RETRY.has(code));
    return { ok: false, permanent, error: `whatsapp HTTP ${res.status}${code ? ` code ${code}` : ''}` };
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
    const res = await postJson<{ type?: string; message?: string }>(
      `${this.options.apiUrl}/api/v5/flow`, { authkey: this.options.authKey, accept: 'application/json' },
      // Unicode for the Indian scripts; no URL shortening (DLT whitelists the link's own domain).
      {
        template_id: templateId, sender: this.options.templates.dlt.sender, short_url: '0', unicode: m.lang === 'en' ? 0 : 1,
        recipients: [{ mobiles: m.contact.phone.slice(1), ...variables }],
      },
    );
    if ('failed' in res) return { ok: false, permanent: false, error: `sms ${res.failed}` };
    if (accepted(res.status) && res.body?.type === 'success' && res.body.message) return { ok: true, providerId: res.body.message };
    return { ok: false, permanent: !transient(res.status), error: `sms HTTP ${res.status}${res.body?.type ? ` ${res.body.type}` : ''}` };
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
