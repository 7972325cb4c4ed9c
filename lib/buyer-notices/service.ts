/**
 * Customer notices (issue 43): push events in, notices out through the channels.
 *
 * `enqueue` runs where push events are delivered (the embedded API's dispatcher intake, the
 * dispatcher app's Kafka intake). It turns an event of a watch with a customer contact into one
 * notice document, once per shipment and event (a stable id: a re-delivered event or a restart adds
 * nothing), and schedules it. The loop claims due notices with a lease (any number of processes
 * share the work; one killed mid-send leaves its notice to be tried again after the lease) and,
 * for each: the key must be active; the notice kind on in the key's settings; quiet hours defer it;
 * the daily cap and the key's allowance may stop it; a stopped number or address is skipped; then
 * the channels in the customer's order, each retried with backoff on provider errors and left for
 * the next on a refusal (WhatsApp → SMS → e-mail as the watch lists them).
 *
 * The contact is decrypted here, right before the send, and goes nowhere but the provider's request.
 * Every send is on record before the provider hears of it, so a kill leaves its notice "cut short"
 * (leased, no outcome). WhatsApp settles such a one by Meta's status webhook, which names the notice
 * (`biz_opaque_callback_data`) and which Meta retries: taken, it is sent and not sent again; after
 * `inDoubtWaitMs` without a status the provider never had it, and it is sent. SMS and e-mail have no
 * such answer: a cut-short one is sent again after the lease, with the same reference (the
 * e-mail's Message-ID), and its detail says so.
 */
import pLimit from 'p-limit';
import { isGone, type KeyStanding } from '../access/standing.ts';
import type { KeyRecord } from '../access/index.ts';
import type { NoticeTemplates } from '../config/index.ts';
import type { WebhookEvent } from '../push/index.ts';
import { isLang, type Lang } from '../tracking-page/types.ts';
import { normalizePhone, usableChannels, type Contact, type NoticeChannel } from './contact.ts';
import type { ChannelMessage, NoticeChannelClient } from './channels.ts';
import { noticeOf, type NoticeFacts } from './kinds.ts';
import { sendableAt } from './policy.ts';
import { noticeIdOf, noticeKeys, NoticeStore, stopDigestOf, type NoticeDoc } from './store.ts';
import { valuesOf } from './templates.ts';
import type { ContactVault } from './vault.ts';

/** Provider errors are retried this many times per channel before the next channel is tried. */
export const TRIES_PER_CHANNEL = 3;
const RETRY_BASE_MS = 15_000;
/** A claimed notice is this process's for this long (a send's timeouts are 10–30 s). */
const LEASE_MS = 60_000;
/** What a notice's detail says when a kill cut its send short and it went again (the provider may have taken the first). */
const CUT_SHORT = 'an attempt was cut short: sent again with the same reference';
const IN_DOUBT_WAIT_MS = 10 * 60_000;
const TAKEN_AFTER_ALL = 'an attempt was cut short: WhatsApp\'s status says it was taken';
/** A notice with no send under way. */
const NO_ATTEMPT = { attempt_started_ms: null, attempt_channel: null } as const;
const WAITING_FOR_STATUS = 'an attempt was cut short: waiting for WhatsApp\'s status of it';
/** How often a paused key's notices are looked at again. */
const PAUSED_RETRY_MS = 10 * 60_000;

const TERMINAL_STAGES: ReadonlySet<string> = new Set(['delivered', 'rto_delivered', 'cancelled']);

export interface BuyerNoticesOptions {
  store: NoticeStore;
  vault: ContactVault;
  templates: NoticeTemplates;
  /** The key's record (standing, plan, period), by prefix. */
  keyOf: (prefix: string) => Promise<KeyRecord | null>;
  standingOf: (key: KeyRecord | null, nowMs: number) => KeyStanding;
  /** The channels a key's notices go through: sandbox providers for test keys and trial plans. */
  channelsFor: (key: KeyRecord) => Partial<Record<NoticeChannel, NoticeChannelClient>>;
  /** Notices per period of the key's plan (config/plans.yaml `notices`); 0: none. */
  allowanceOf: (key: KeyRecord) => number;
  shopNameOf: (prefix: string) => Promise<string>;
  carrierNameOf: (slug: string) => string;
  /** The tracking page of the watch (every notice links to it). */
  pageLinkOf: (prefix: string, mode: KeyRecord['mode'], carrier: string, awb: string) => Promise<string>;
  /** The one-click unsubscribe URL of an address for a key. */
  unsubscribeUrlOf: (prefix: string, email: string) => string;
  /** The allowance is spent (told once per period). */
  onAllowanceSpent?: (key: KeyRecord) => Promise<void>;
  /** Every notice that reached a final state (metrics). */
  onSettled?: (doc: NoticeDoc, startedMs: number) => void;
  clock?: () => number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** How often an idle loop looks for due notices (work enqueued in this process wakes it at once). */
  idleMs?: number;
  /** Notices sent at once by this process. */
  concurrency?: number;
  /** How long a claimed notice is this process's (default 60 s; a send's timeouts are 10–30 s). */
  leaseMs?: number;
  /**
   * A WhatsApp send a kill cut short waits this long for Meta's status of it before it is sent again
   * (default 10 minutes; Meta retries a status webhook it could not deliver for a day).
   */
  inDoubtWaitMs?: number;
}

export class BuyerNotices {
  readonly store: NoticeStore;
  private readonly o: BuyerNoticesOptions;
  private readonly clock: () => number;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private lastSweepMs = 0;

  constructor(options: BuyerNoticesOptions) {
    this.o = options;
    this.store = options.store;
    this.clock = options.clock ?? Date.now;
  }

  /** Push events in: a notice for each that asks one of a watch with a customer contact. */
  async enqueue(events: readonly WebhookEvent[]): Promise<void> {
    let added = false;
    for (const event of events) {
      if (!event.carrier || !event.awb || !event.type.startsWith('tracking.')) continue;
      const customer = await this.o.vault.view(event.key_prefix, event.carrier, event.awb);
      if (!customer) continue;
      const facts = noticeOf(event);
      // Erased 7 days after this service learned the shipment ended (a late poll's end is not backdated).
      if (terminalStageOf(event)) await this.o.vault.endBy(event.key_prefix, event.carrier, event.awb, this.clock());
      if (!facts) continue;
      const settings = await this.store.settings(event.key_prefix);
      if (!settings.events.includes(facts.kind)) continue;
      added = (await this.store.add(this.newDoc(event, facts, customer.language), this.clock())) || added;
    }
    if (added) this.wake?.();
  }

  private newDoc(event: WebhookEvent, facts: NoticeFacts, language: string): NoticeDoc {
    const now = this.clock();
    return {
      id: noticeIdOf(event.key_prefix, event.mode, facts.carrier, facts.awb, facts.dedupeKey),
      key_prefix: event.key_prefix, mode: event.mode, carrier: facts.carrier, awb: facts.awb, kind: facts.kind, sequence: event.sequence,
      day: facts.day, reason: facts.reason,
      language, status: 'queued', channel: null, template: null, failed_channels: [], tries: 0, provider_id: null, detail: null,
      attempt_started_ms: null, created_ms: now, updated_ms: now,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    // The loop's pass in flight ends first: its sends finish and their outcomes are written.
    await this.loop;
  }

  /** One pass: claims what is due and tries it (tests call this instead of the loop). */
  async runDue(limit = 64): Promise<number> {
    const now = this.clock();
    if (now - this.lastSweepMs >= 60_000) {
      this.lastSweepMs = now;
      await this.o.vault.sweep(now);
    }
    const members = await this.store.kv.claimDue(noticeKeys.due(), now, this.o.leaseMs ?? LEASE_MS, limit);
    // A shipment's notices one after another in event order (picked up before delivered); shipments side by side.
    const docs = await this.store.kv.getMany<NoticeDoc>(members.map((m) => noticeKeys.notice(m.split('|')[0] ?? '', m.split('|')[1] ?? '')));
    const byShipment = new Map<string, { member: string; doc: NoticeDoc | null }[]>();
    members.forEach((member, i) => {
      const doc = docs[i] ?? null;
      const shipment = doc ? `${doc.key_prefix}|${doc.carrier}|${doc.awb}` : member;
      byShipment.set(shipment, [...(byShipment.get(shipment) ?? []), { member, doc }]);
    });
    const queues = [...byShipment.values()].map((q) => q.sort((a, b) => (a.doc?.sequence ?? 0) - (b.doc?.sequence ?? 0)));
    const limitRun = pLimit(this.o.concurrency ?? 16);
    await Promise.all(queues.map((queue) => limitRun(async () => {
      for (const { member, doc } of queue) {
        await this.tryOne(member, doc).catch((err: unknown) => {
          this.o.log?.('warn', `customer notice ${member.split('|')[1] ?? ''}: ${(err as Error).message}`);
        });
      }
    })));
    return members.length;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      if (this.store.kv.available()) {
        claimed = await this.runDue().catch((err: unknown) => { this.o.log?.('warn', `customer notices: ${(err as Error).message}`); return 0; });
      }
      if (claimed === 0 && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.o.idleMs ?? 500);
          this.wake = () => { clearTimeout(timer); resolve(); };
        });
        this.wake = null;
      }
    }
  }

  private async tryOne(member: string, doc: NoticeDoc | null): Promise<void> {
    const prefix = doc?.key_prefix;
    if (!doc || !prefix || ['sent', 'delivered', 'failed', 'suppressed'].includes(doc.status)) return this.done(member);
    const now = this.clock();
    // A WhatsApp send cut short: Meta's status (which names the notice) says whether it took it.
    const cutShort = doc.attempt_channel === 'whatsapp' && doc.attempt_started_ms != null;
    const inDoubtUntil = cutShort ? doc.attempt_started_ms! + (this.o.inDoubtWaitMs ?? IN_DOUBT_WAIT_MS) : 0;
    if (now < inDoubtUntil) {
      if (doc.detail !== WAITING_FOR_STATUS) await this.store.put({ ...doc, detail: WAITING_FOR_STATUS, updated_ms: now });
      return this.later(member, inDoubtUntil);
    }
    const key = await this.o.keyOf(prefix);
    const standing = this.o.standingOf(key, now);
    if (isGone(standing)) return this.settle(member, doc, 'suppressed', 'key revoked');
    if (standing !== 'active' || !key) return this.later(member, now + PAUSED_RETRY_MS);

    const settings = await this.store.settings(prefix);
    if (!settings.events.includes(doc.kind)) return this.settle(member, doc, 'suppressed', 'notice turned off');
    const opened = await this.o.vault.open(prefix, doc.carrier, doc.awb);
    if (!opened) return this.settle(member, doc, 'suppressed', 'no customer contact');
    const at = sendableAt(doc.kind, now, settings.quiet_hours);
    if (at > now) {
      await this.store.put({ ...doc, status: 'deferred', detail: 'quiet hours', updated_ms: now });
      return this.later(member, at);
    }
    const allowance = this.o.allowanceOf(key);
    if ((await this.store.used(prefix, key.period_start)) >= allowance) {
      if (allowance > 0 && (await this.store.firstOver(prefix, key.period_start))) await this.o.onAllowanceSpent?.(key);
      return this.settle(member, doc, 'suppressed', allowance > 0 ? 'allowance spent' : 'not in the plan');
    }
    const stops = await this.store.stopped(prefix);
    const stoppedChannel = (c: NoticeChannel) => {
      const address = c === 'email' ? opened.contact.email : opened.contact.phone;
      return address !== null && stops.has(stopDigestOf(prefix, address));
    };
    const planned = usableChannels(opened.doc.channels, opened.contact);
    const open = planned.filter((c) => !stoppedChannel(c));
    if (open.length === 0) return this.settle(member, doc, 'suppressed', planned.length ? 'customer stopped notices' : 'no usable channel');
    const channel = open.find((c) => !doc.failed_channels.includes(c));
    if (!channel) {
      await this.store.giveDaySlot(prefix, doc.carrier, doc.awb, doc.id);
      return this.settle(member, doc, 'failed', doc.detail ?? 'every channel failed');
    }
    if (!(await this.store.takeDaySlot(prefix, doc.carrier, doc.awb, doc.id, now))) return this.settle(member, doc, 'suppressed', 'daily cap');
    await this.send(member, doc, key, channel, opened.contact, now);
  }

  private async send(member: string, doc: NoticeDoc, key: KeyRecord, channel: NoticeChannel, contact: Contact, now: number): Promise<void> {
    const client = this.o.channelsFor(key)[channel];
    const lang: Lang = isLang(doc.language) ? doc.language : 'en';
    const templates = this.o.templates;
    const template = channel === 'whatsapp' ? templates.whatsapp[doc.kind] : channel === 'sms' ? templates.sms[doc.kind][lang] : `email:${doc.kind}`;
    if (!client) {
      await this.store.put({ ...doc, failed_channels: [...doc.failed_channels, channel], tries: 0, detail: `${channel} not configured`, updated_ms: now });
      return this.later(member, now);
    }
    const values = valuesOf(
      doc, lang, await this.o.shopNameOf(doc.key_prefix), this.o.carrierNameOf(doc.carrier),
      await this.o.pageLinkOf(doc.key_prefix, doc.mode, doc.carrier, doc.awb),
    );
    const message: ChannelMessage = {
      noticeId: doc.id, reference: `${doc.key_prefix}|${doc.id}`, kind: doc.kind, lang, values, contact,
      unsubscribeUrl: contact.email ? this.o.unsubscribeUrlOf(doc.key_prefix, contact.email) : '',
    };
    // The attempt is on record before the provider hears of it: one cut short by a kill is known as such.
    const interrupted = doc.attempt_started_ms !== null && doc.attempt_started_ms !== undefined;
    await this.store.put({ ...doc, attempt_started_ms: now, attempt_channel: channel, ...(interrupted ? { detail: CUT_SHORT } : {}) });
    const outcome = await client.send(message);
    const at = this.clock();
    if (outcome.ok) {
      await this.store.countUsed(doc.key_prefix, key.period_start);
      const sent: NoticeDoc = {
        ...doc, status: 'sent', channel, template, language: lang, provider_id: outcome.providerId, ...NO_ATTEMPT,
        detail: interrupted ? CUT_SHORT : null, updated_ms: at,
      };
      await this.store.put(sent);
      // A STOP reply names only the number: remember which keys notified it.
      if (channel !== 'email' && contact.phone) await this.store.rememberSender(contact.phone, doc.key_prefix, at);
      this.o.onSettled?.(sent, doc.created_ms);
      return this.done(member);
    }
    const tries = doc.tries + 1;
    if (outcome.permanent || tries >= TRIES_PER_CHANNEL) {
      const failed = [...doc.failed_channels, channel];
      await this.store.put({
        ...doc, status: 'queued', channel, template, failed_channels: failed, tries: 0, detail: outcome.error, ...NO_ATTEMPT,
        updated_ms: at,
      });
      return this.later(member, at);
    }
    await this.store.put({ ...doc, status: 'queued', channel, template, tries, detail: outcome.error, ...NO_ATTEMPT, updated_ms: at });
    return this.later(member, at + RETRY_BASE_MS * 2 ** (tries - 1));
  }

  /**
   * A WhatsApp status of a notice (Meta's webhook; the notice named by its `prefix|id` reference):
   * a sent notice becomes delivered (read counts as delivered) or failed; one whose send a kill cut
   * short is settled by it, so it is not sent again: taken by the provider (sent, delivered, read)
   * is sent, a failure moves on to the next channel.
   */
  async providerStatus(reference: string, status: string, providerId: string | null, errorCode: number | null): Promise<void> {
    const [prefix, id] = reference.split('|');
    if (!prefix || !id) return;
    const doc = await this.store.get(prefix, id);
    if (!doc) return;
    const taken = status === 'sent' || status === 'delivered' || status === 'read';
    const now = this.clock();
    const failure = `whatsapp status failed${errorCode ? ` code ${errorCode}` : ''}`;
    if (doc.status === 'sent' && status !== 'sent') {
      await this.store.put({ ...doc, status: taken ? 'delivered' : 'failed', detail: taken ? doc.detail : failure, updated_ms: now });
      return;
    }
    const inDoubt = doc.status === 'queued' && doc.attempt_channel === 'whatsapp' && doc.attempt_started_ms != null;
    if (!inDoubt) return;
    const member = `${prefix}|${id}`;
    if (!taken) {
      await this.store.put({ ...doc, failed_channels: [...doc.failed_channels, 'whatsapp'], tries: 0, detail: failure, ...NO_ATTEMPT, updated_ms: now });
      return this.later(member, now);
    }
    const key = await this.o.keyOf(prefix);
    if (key) await this.store.countUsed(prefix, key.period_start);
    const opened = await this.o.vault.open(prefix, doc.carrier, doc.awb);
    if (opened?.contact.phone) await this.store.rememberSender(opened.contact.phone, prefix, now);
    const lang: Lang = isLang(doc.language) ? doc.language : 'en';
    const sent: NoticeDoc = {
      ...doc, status: status === 'sent' ? 'sent' : 'delivered', channel: 'whatsapp', template: this.o.templates.whatsapp[doc.kind], language: lang,
      provider_id: providerId, ...NO_ATTEMPT, detail: TAKEN_AFTER_ALL, updated_ms: now,
    };
    await this.store.put(sent);
    this.o.onSettled?.(sent, doc.created_ms);
    await this.done(member);
  }

  /** STOP from a phone: every key that notified it lately stops notifying it. */
  async stopFromReply(phone: string): Promise<void> {
    const normalized = normalizePhone(phone);
    if (!normalized) return;
    for (const prefix of await this.store.sendersOf(normalized)) await this.store.stop(prefix, normalized);
  }

  private async settle(member: string, doc: NoticeDoc, status: NoticeDoc['status'], detail: string): Promise<void> {
    const settled = { ...doc, status, detail, updated_ms: this.clock() };
    await this.store.put(settled);
    this.o.onSettled?.(settled, doc.created_ms);
    await this.done(member);
  }

  private async later(member: string, atMs: number): Promise<void> {
    await this.store.kv.schedule(noticeKeys.due(), member, atMs);
  }

  private async done(member: string): Promise<void> {
    await this.store.kv.unschedule(noticeKeys.due(), member);
  }
}

function terminalStageOf(event: WebhookEvent): boolean {
  try {
    const body = JSON.parse(event.body) as { data?: { tracking?: { insights?: { current_stage?: string } } } };
    return TERMINAL_STAGES.has(body.data?.tracking?.insights?.current_stage ?? '');
  } catch {
    return false;
  }
}
