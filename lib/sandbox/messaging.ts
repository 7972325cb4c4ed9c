/**
 * The sandbox messaging providers (issue 43): the subsets of Meta's WhatsApp Cloud API, MSG91's
 * Flow API and an SMTP server that customer notices use, in one process, so the embedded default
 * and `trk_test_` keys send notices a newcomer can see at once (`GET /` lists them) and tests check
 * exactly what a provider received. Like a real provider it checks the credentials, accepts only
 * the registered templates (config/notices.yaml) with exactly their variables, and renders the
 * registered text in the template's language.
 *
 * It keeps what it received in memory only (the last 500), and shows recipients masked: it stands
 * in for a third party, and must not become a file of customers' numbers on a developer's disk.
 *
 * Failures to try: WhatsApp answers 131026 (not on WhatsApp) for numbers ending 0000; `failNext`
 * makes a channel answer errors (transient: HTTP 500, or permanent) for the next calls. `reply`
 * plays a customer's WhatsApp or SMS reply (e.g. STOP) to the webhook URLs set with `setWebhooks`:
 * the WhatsApp one signed with X-Hub-Signature-256 as Meta signs, delivery statuses too.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { SMTPServer } from 'smtp-server';
import { request } from 'undici';
import { DEFAULT_CONFIG_DIR, loadNoticeTemplates, type NoticeTemplates } from '../config/index.ts';
import { maskEmail, maskPhone } from '../buyer-notices/contact.ts';
import { NOTICE_KINDS, type NoticeKind } from '../buyer-notices/kinds.ts';
import { NOTICE_CATALOGUES, variablesOf } from '../buyer-notices/templates.ts';
import { escapeHtml } from '../html/index.ts';
import { isLang, LANGS, type Lang } from '../tracking-page/types.ts';
import { IntlMessageFormat } from 'intl-messageformat';

export type SandboxChannel = 'whatsapp' | 'sms' | 'email';

/** One message as the sandbox received it. `to` is masked. */
export interface ReceivedMessage {
  channel: SandboxChannel;
  id: string;
  to: string;
  /** WhatsApp: the template name; SMS: the template id; e-mail: the subject. */
  template: string;
  language: string | null;
  variables: Record<string, string>;
  /** The registered text rendered with the variables (e-mail: the text body). */
  text: string;
  /** WhatsApp `biz_opaque_callback_data`; e-mail: the Message-ID. */
  reference: string | null;
  headers: Record<string, string>;
  at: string;
}

export interface RunningMessaging {
  url: string;
  smtpUrl: string;
  whatsapp: { version: string; phoneNumberId: string; accessToken: string; appSecret: string };
  msg91: { authKey: string };
  received(): ReceivedMessage[];
  clear(): void;
  /** Where statuses and replies go: the API's WhatsApp webhook and SMS inbound URLs. */
  setWebhooks(urls: { whatsapp?: string | null; sms?: string | null }): void;
  /** The next `count` sends on `channel` fail: `transient` (HTTP 500) or not (a refusal). */
  failNext(channel: SandboxChannel, count: number, transient?: boolean): void;
  /** A customer's reply from `phone` (E.164) on WhatsApp or SMS, posted to the webhook. */
  reply(channel: 'whatsapp' | 'sms', phone: string, text: string): Promise<number>;
  close(): Promise<void>;
}

const KEEP = 500;
const STATUS_TRIES = 240;
const STATUS_RETRY_MS = 250;

function render(kind: NoticeKind, lang: Lang, variables: Record<string, string>): string {
  return String(new IntlMessageFormat(NOTICE_CATALOGUES[lang][kind], `${lang}-IN`).format(variables));
}

/** Whether `given` holds exactly the template's variables, each a non-empty string of at most 30 characters (DLT) or a link. */
function exactVariables(kind: NoticeKind, lang: Lang, given: Record<string, unknown>): string | null {
  const wanted = variablesOf(kind, lang);
  const names = Object.keys(given);
  const missing = wanted.filter((n) => typeof given[n] !== 'string' || given[n] === '');
  if (missing.length) return `missing variables: ${missing.join(', ')}`;
  const extra = names.filter((n) => !wanted.includes(n as never));
  if (extra.length) return `variables not in the template: ${extra.join(', ')}`;
  const long = wanted.filter((n) => n !== 'link' && (given[n] as string).length > 30);
  return long.length ? `variables longer than 30 characters: ${long.join(', ')}` : null;
}

export interface MessagingSandboxOptions {
  templates?: NoticeTemplates;
  host?: string;
  /** Every message as it is accepted (the bench counts arrivals with it); the list keeps the last 500. */
  onReceived?: (message: ReceivedMessage) => void;
}

export async function startMessagingSandbox(options: MessagingSandboxOptions = {}): Promise<RunningMessaging> {
  const templates = options.templates ?? loadNoticeTemplates(DEFAULT_CONFIG_DIR);
  const host = options.host ?? '127.0.0.1';
  const whatsapp = {
    version: 'v23.0', phoneNumberId: '100000000000001', accessToken: `EAAsandbox${randomBytes(12).toString('hex')}`, appSecret: randomBytes(16).toString('hex'),
  };
  const msg91 = { authKey: randomBytes(12).toString('hex') };
  const messages: ReceivedMessage[] = [];
  const failures: Record<SandboxChannel, { count: number; transient: boolean }> = {
    whatsapp: { count: 0, transient: true }, sms: { count: 0, transient: true }, email: { count: 0, transient: true },
  };
  const hooks: { whatsapp: string | null; sms: string | null } = { whatsapp: null, sms: null };
  let closed = false;
  const keep = (m: ReceivedMessage) => {
    messages.push(m);
    if (messages.length > KEEP) messages.shift();
    options.onReceived?.(m);
  };
  const failing = (channel: SandboxChannel) => {
    const f = failures[channel];
    if (f.count <= 0) return null;
    f.count--;
    return f;
  };
  const byWhatsappName = new Map<string, NoticeKind>(NOTICE_KINDS.map((k) => [templates.whatsapp[k], k]));
  const bySmsId = new Map<string, { kind: NoticeKind; lang: Lang }>();
  for (const kind of NOTICE_KINDS) for (const lang of LANGS) bySmsId.set(templates.sms[kind][lang], { kind, lang });

  const signedPost = async (url: string, body: string, sign: boolean) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (sign) headers['x-hub-signature-256'] = `sha256=${createHmac('sha256', whatsapp.appSecret).update(body).digest('hex')}`;
    const res = await request(url, { method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
    await res.body.dump();
    return res.statusCode;
  };
  const envelope = (value: Record<string, unknown>) => JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{
      id: '200000000000002',
      changes: [{
        field: 'messages',
        value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: whatsapp.phoneNumberId }, ...value },
      }],
    }],
  });
  const sendStatus = (id: string, recipient: string, reference: string | null) => {
    if (!hooks.whatsapp) return;
    const status = {
      id, status: 'delivered', timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: recipient,
      ...(reference ? { biz_opaque_callback_data: reference } : {}),
    };
    // After the answer, as Meta's webhooks come; one not answered 200 is tried again (Meta: with growing
    // delays for a day; here every STATUS_RETRY_MS, STATUS_TRIES times), so a receiver down a moment misses none.
    const body = envelope({ statuses: [status] });
    let tries = 0;
    const attempt = () => {
      tries++;
      const url = hooks.whatsapp;
      if (!url || closed) return;
      void signedPost(url, body, true).then((code) => code === 200, () => false).then((ok) => {
        if (!ok && tries < STATUS_TRIES && !closed) setTimeout(attempt, STATUS_RETRY_MS).unref();
      });
    };
    setTimeout(attempt, 20).unref();
  };

  const app: FastifyInstance = Fastify({ logger: false });
  app.post('/:version/:phoneNumberId/messages', async (req, reply) => {
    const params = req.params as { version: string; phoneNumberId: string };
    const error = (status: number, code: number, message: string) =>
      reply.code(status).send({ error: { message, type: 'OAuthException', code, fbtrace_id: randomBytes(8).toString('hex') } });
    if (req.headers.authorization !== `Bearer ${whatsapp.accessToken}`) return error(401, 190, 'Invalid OAuth access token.');
    if (params.phoneNumberId !== whatsapp.phoneNumberId) return error(400, 100, 'Unsupported post request: unknown phone number id.');
    const body = req.body as {
      messaging_product?: string; to?: string; type?: string; biz_opaque_callback_data?: string;
      template?: {
        name?: string; language?: { code?: string };
        components?: { type?: string; parameters?: { type?: string; parameter_name?: string; text?: string }[] }[];
      };
    } | null;
    if (body?.messaging_product !== 'whatsapp' || body.type !== 'template' || !body.template) {
      return error(400, 100, 'Invalid parameter: a template message is expected.');
    }
    if (!/^91[6-9]\d{9}$/.test(body.to ?? '')) return error(400, 100, 'Invalid parameter: to.');
    const kind = byWhatsappName.get(body.template.name ?? '');
    const lang = body.template.language?.code ?? '';
    if (!kind || !isLang(lang)) return error(404, 132001, 'Template name does not exist in the translation.');
    const parameters = body.template.components?.find((c) => c.type === 'body')?.parameters ?? [];
    const variables = Object.fromEntries(parameters.map((p) => [p.parameter_name ?? '', p.text ?? '']));
    const problem = exactVariables(kind, lang, variables);
    if (problem) return error(400, 132000, `Number of parameters does not match the expected number of params: ${problem}.`);
    const fail = failing('whatsapp');
    if (fail) return fail.transient ? error(500, 131000, 'Something went wrong.') : error(400, 131026, 'Message undeliverable.');
    if (body.to!.endsWith('0000')) return error(400, 131026, 'Message undeliverable.');
    const id = `wamid.${randomBytes(18).toString('base64url')}`;
    keep({
      channel: 'whatsapp', id, to: maskPhone(`+${body.to}`), template: body.template.name!, language: lang, variables,
      text: render(kind, lang, variables), reference: body.biz_opaque_callback_data ?? null, headers: {}, at: new Date().toISOString(),
    });
    sendStatus(id, body.to!, body.biz_opaque_callback_data ?? null);
    return { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id, message_status: 'accepted' }] };
  });

  app.post('/api/v5/flow', async (req, reply) => {
    const error = (status: number, message: string) => reply.code(status).send({ type: 'error', message });
    if (req.headers.authkey !== msg91.authKey) return error(401, 'Authentication failure');
    const body = req.body as { template_id?: string; sender?: string; recipients?: Record<string, unknown>[] } | null;
    const registered = bySmsId.get(body?.template_id ?? '');
    if (!registered) return error(400, 'Invalid template id (not mapped to a DLT content template)');
    // DLT: the header must be the one the template is registered under, or the operator drops the SMS.
    if (body?.sender !== templates.dlt.sender) return error(400, 'Sender header does not match the DLT template\'s header');
    const recipients = body?.recipients ?? [];
    if (recipients.length !== 1) return error(400, 'Exactly one recipient per request in this sandbox');
    const { mobiles, ...variables } = recipients[0]!;
    if (typeof mobiles !== 'string' || !/^91[6-9]\d{9}$/.test(mobiles)) return error(400, 'Invalid mobile number');
    const problem = exactVariables(registered.kind, registered.lang, variables);
    if (problem) return error(400, `Template variables do not match the DLT template: ${problem}`);
    const fail = failing('sms');
    if (fail) return fail.transient ? error(500, 'Internal server error') : error(400, 'Number blocked (DLT scrubbing)');
    const id = randomBytes(12).toString('hex');
    const values = variables as Record<string, string>;
    keep({
      channel: 'sms', id, to: maskPhone(`+${mobiles}`), template: body!.template_id!, language: registered.lang, variables: values,
      text: render(registered.kind, registered.lang, values), reference: null, headers: { sender: body!.sender! }, at: new Date().toISOString(),
    });
    return { type: 'success', message: id };
  });

  app.get('/', async (_req, reply) => {
    const cells = (m: ReceivedMessage) => [m.at, m.channel, m.to, m.template, m.language ?? ''].map((v) => `<td>${escapeHtml(v)}</td>`).join('');
    const rows = [...messages].reverse().map((m) => `<tr>${cells(m)}`
      + `<td lang="${escapeHtml(m.language ?? 'en')}">${escapeHtml(m.text)}</td></tr>`).join('');
    const head = ['Received', 'Channel', 'To', 'Template', 'Language', 'Text'].map((h) => `<th scope="col">${h}</th>`).join('');
    return reply.type('text/html; charset=utf-8').send('<!doctype html><html lang="en"><head><meta charset="utf-8">'
      + '<meta name="viewport" content="width=device-width">'
      + '<title>Sandbox notices</title></head><body><main><h1>Notices the sandbox providers received</h1>'
      + '<p>WhatsApp (Cloud API), SMS (MSG91 Flow) and e-mail (SMTP) sent by this service, newest first; kept in memory only, recipients masked.</p>'
      + `<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></main></body></html>`);
  });
  app.get('/messages', async () => ({ messages }));

  await app.listen({ port: 0, host });
  const url = `http://${host}:${(app.server.address() as AddressInfo).port}`;

  // SMTP: any sender, no authentication, messages kept in memory.
  const smtp = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false, banner: 'sandbox notices',
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const fail = failing('email');
        if (fail) {
          const err = Object.assign(new Error(fail.transient ? 'Try again later' : 'Mailbox unavailable'), { responseCode: fail.transient ? 451 : 550 });
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const [head, ...rest] = raw.split(/\r?\n\r?\n/);
        const headers: Record<string, string> = {};
        for (const line of (head ?? '').replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
          const i = line.indexOf(':');
          if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
        }
        const to = session.envelope.rcptTo[0]?.address ?? '';
        keep({
          channel: 'email', id: headers['message-id'] ?? randomBytes(8).toString('hex'), to: to ? maskEmail(to) : '',
          template: decodeWords(headers.subject ?? ''),
          language: null, variables: {}, text: rest.join('\n\n'), reference: headers['message-id'] ?? null,
          headers: Object.fromEntries(Object.entries(headers).filter(([k]) => k.startsWith('list-unsubscribe') || k === 'x-notice-id' || k === 'content-type')),
          at: new Date().toISOString(),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, host, resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  return {
    url, smtpUrl: `smtp://${host}:${smtpPort}`, whatsapp, msg91,
    received: () => [...messages],
    clear: () => { messages.length = 0; },
    setWebhooks(urls) {
      if (urls.whatsapp !== undefined) hooks.whatsapp = urls.whatsapp;
      if (urls.sms !== undefined) hooks.sms = urls.sms;
    },
    failNext(channel, count, transient = true) {
      failures[channel] = { count, transient };
    },
    async reply(channel, phone, text) {
      const from = phone.replace(/^\+/, '');
      const ts = String(Math.floor(Date.now() / 1000));
      if (channel === 'whatsapp') {
        if (!hooks.whatsapp) throw new Error('no WhatsApp webhook set');
        return signedPost(hooks.whatsapp, envelope({
          contacts: [{ profile: { name: 'Customer' }, wa_id: from }],
          messages: [{ from, id: `wamid.${randomBytes(18).toString('base64url')}`, timestamp: ts, type: 'text', text: { body: text } }],
        }), true);
      }
      if (!hooks.sms) throw new Error('no SMS inbound URL set');
      return signedPost(hooks.sms, JSON.stringify({ mobile: from, message: text, received_at: ts }), false);
    },
    async close() {
      closed = true;
      await app.close();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    },
  };
}

/** An RFC 2047 encoded subject (`=?UTF-8?B?…?=`, what nodemailer writes for non-ASCII), decoded. */
function decodeWords(value: string): string {
  return value.replace(/=\?UTF-8\?([BQ])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) => (enc.toUpperCase() === 'B'
    ? Buffer.from(text, 'base64').toString('utf8')
    : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8')));
}
