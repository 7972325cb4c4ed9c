/**
 * Customer notices as a process runs them: the vault's key, the channels per key (the sandbox
 * providers for `trk_test_` keys and trial plans; the configured providers for live keys, or the
 * sandbox where no real provider can be reached, as on the embedded default), and what a notice
 * needs to read (the key, its plan, the shop's name, the watch's page).
 */
import { hkdfSync } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { AccessStore, KeyRecord } from '../access/index.ts';
import { standingOf } from '../access/standing.ts';
import type { BrandingStore } from '../branding/index.ts';
import type { Env, NoticeTemplates, Plans } from '../config/index.ts';
import type { Kv } from '../kv/index.ts';
import { pushKeys, type PageLinks, type WatchDoc } from '../push/index.ts';
import { EmailChannel, Msg91SmsChannel, WhatsAppChannel, type NoticeChannelClient } from './channels.ts';
import type { NoticeChannel } from './contact.ts';
import { BuyerNotices } from './service.ts';
import { NoticeStore, type NoticeDoc } from './store.ts';
import type { NoticeMetrics } from '../metrics/index.ts';
import { unsubscribeTokenOf } from './unsubscribe.ts';
import { ContactVault, contactKeyOf } from './vault.ts';

type Channels = Partial<Record<NoticeChannel, NoticeChannelClient>>;

/** The sandbox providers' address and credentials (lib/sandbox/messaging.ts). */
export interface MessagingSandboxTarget {
  url: string;
  smtpUrl: string;
  /** `appSecret`: what the sandbox signs its webhooks with (the API checks them with it unless WHATSAPP_APP_SECRET is set). */
  whatsapp: { version: string; phoneNumberId: string; accessToken: string; appSecret?: string };
  msg91: { authKey: string };
}

export interface NoticesWiring {
  env: Env;
  kv: Kv;
  access: Pick<AccessStore, 'getByPrefix'>;
  plans: Plans;
  templates: NoticeTemplates;
  branding: BrandingStore;
  pages: PageLinks;
  carrierNameOf: (slug: string) => string;
  /** The address customers reach this service at (links in notices). */
  baseUrl: () => string;
  /** The sandbox providers, where this process has them. */
  sandbox: MessagingSandboxTarget | null;
  /** Live keys go to the sandbox for a channel with no real provider configured (the embedded default). */
  liveFallsBackToSandbox: boolean;
  from: string;
  onAllowanceSpent?: (key: KeyRecord) => Promise<void>;
  /** Counts settled notices (lib/metrics createNoticeMetrics) where this process sends them. */
  metrics?: NoticeMetrics | null;
  clock?: () => number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export interface NoticesRuntime {
  notices: BuyerNotices;
  vault: ContactVault;
  store: NoticeStore;
  /** The secret of unsubscribe tokens (derived from the vault's key; it never leaves the process). */
  unsubscribeSecret: Buffer;
  close(): Promise<void>;
}

function channelsOf(o: { whatsapp?: WhatsAppChannel | null; sms?: Msg91SmsChannel | null; email?: EmailChannel | null }): Channels {
  const out: Channels = {};
  if (o.whatsapp) out.whatsapp = o.whatsapp;
  if (o.sms) out.sms = o.sms;
  if (o.email) out.email = o.email;
  return out;
}

export function createNotices(w: NoticesWiring): NoticesRuntime {
  const { env, templates } = w;
  const key = contactKeyOf(env.CONTACT_ENCRYPTION_KEY, join(resolve(env.DATA_DIR), 'contact-key'));
  const vault = new ContactVault(w.kv, key);
  // Unsubscribe links are signed with a key of their own, derived from the vault's (one secret to keep, two uses apart).
  const unsubscribeSecret = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'customer-notices unsubscribe links', 32));
  const store = new NoticeStore(w.kv);
  const sandbox: Channels = w.sandbox ? channelsOf({
    whatsapp: new WhatsAppChannel({
      apiUrl: w.sandbox.url, version: w.sandbox.whatsapp.version, phoneNumberId: w.sandbox.whatsapp.phoneNumberId,
      accessToken: w.sandbox.whatsapp.accessToken, templates,
    }),
    sms: new Msg91SmsChannel({ apiUrl: w.sandbox.url, authKey: w.sandbox.msg91.authKey, templates }),
    email: new EmailChannel({ smtpUrl: w.sandbox.smtpUrl, from: w.from }),
  }) : {};
  const live = channelsOf({
    whatsapp: env.WHATSAPP_PHONE_NUMBER_ID && env.WHATSAPP_ACCESS_TOKEN ? new WhatsAppChannel({
      apiUrl: env.WHATSAPP_API_URL, version: env.WHATSAPP_API_VERSION, phoneNumberId: env.WHATSAPP_PHONE_NUMBER_ID,
      accessToken: env.WHATSAPP_ACCESS_TOKEN, templates,
    }) : null,
    sms: env.MSG91_AUTHKEY ? new Msg91SmsChannel({ apiUrl: env.MSG91_API_URL, authKey: env.MSG91_AUTHKEY, templates }) : null,
    email: env.SMTP_URL ? new EmailChannel({ smtpUrl: env.SMTP_URL, from: w.from }) : null,
  });
  const liveOrSandbox: Channels = w.liveFallsBackToSandbox ? { ...sandbox, ...live } : live;
  const base = () => w.baseUrl().replace(/\/+$/, '');
  const notices = new BuyerNotices({
    store, vault, templates,
    keyOf: (prefix) => w.access.getByPrefix(prefix),
    standingOf: (record, ms) => standingOf(record, new Date(ms)),
    // Test keys and trial plans never reach a real customer: the sandbox only.
    channelsFor: (record) => (record.mode === 'test' || record.plan === 'trial' ? sandbox : liveOrSandbox),
    allowanceOf: (record) => w.plans[record.plan].notices,
    shopNameOf: async (prefix) => (await w.branding.get(prefix))?.name ?? '',
    carrierNameOf: w.carrierNameOf,
    pageLinkOf: async (prefix, mode, carrier, awb) => {
      const watch = await w.kv.get<WatchDoc>(pushKeys.watch(prefix, carrier, awb));
      const token = await w.pages.register({ kind: 'shipment', prefix, mode, carrier, awb, watched_since_ms: watch?.watched_since_ms ?? 0 });
      return `${base()}/t/${token}`;
    },
    unsubscribeUrlOf: (prefix, email) => `${base()}/notices/unsubscribe/${unsubscribeTokenOf(unsubscribeSecret, prefix, email)}`,
    onAllowanceSpent: w.onAllowanceSpent,
    ...(w.metrics ? { onSettled: (doc: NoticeDoc, madeMs: number) => w.metrics!.settled(doc.channel, doc.status, doc.updated_ms - madeMs) } : {}),
    clock: w.clock,
    log: w.log,
  });
  return {
    notices, vault, store, unsubscribeSecret,
    async close() {
      await notices.stop();
      await Promise.all([...Object.values(sandbox), ...Object.values(live)].map((c) => c.close()));
    },
  };
}
