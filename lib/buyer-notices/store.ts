/**
 * Notices as kept in the state store (push's: Redis or DATA_DIR), beside the watches. Every
 * document of one API key carries its prefix as a hash tag. A notice document never holds the
 * customer's contact: it is the processing log the DPDP Rules expect (kept a year), and what
 * `GET /v1/notices` lists. The suppression list holds SHA-256 digests, never a number or address.
 */
import { createHash } from 'node:crypto';
import type { Kv } from '../kv/index.ts';
import type { KeyMode, NdrReason } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';
import type { NoticeChannel } from './contact.ts';
import type { NoticeKind } from './kinds.ts';
import { DEFAULT_NOTICE_SETTINGS, takeDaySlot, type DaySlots, type NoticeSettings } from './policy.ts';

export const NOTICE_STATUSES = ['queued', 'deferred', 'sent', 'delivered', 'failed', 'suppressed'] as const;
export type NoticeStatus = (typeof NOTICE_STATUSES)[number];
/** The processing log is kept a year (contracts.md "Customer notices"). */
export const NOTICE_KEEP_MS = 366 * DAY_MS;
/** Per key, the newest notices listed (older ones stay until their year ends but are not listed). */
const LIST_KEEP = 10_000;

export interface NoticeDoc {
  id: string;
  key_prefix: string;
  mode: KeyMode;
  carrier: string;
  awb: string;
  kind: NoticeKind;
  /** The push event's sequence (per key and shipment): a shipment's notices go in this order. */
  sequence: number;
  day: string | null;
  reason: NdrReason | null;
  language: string;
  status: NoticeStatus;
  /** The channel that took it (or was tried last). */
  channel: NoticeChannel | null;
  template: string | null;
  /** Channels that failed for good, in order. */
  failed_channels: NoticeChannel[];
  /** Failed tries of the current channel. */
  tries: number;
  provider_id: string | null;
  /** Why it was not sent, or the last failure's code: never the provider's message text. */
  detail: string | null;
  /** A send to the provider began then and has no outcome yet (a kill leaves it set), on this channel. */
  attempt_started_ms?: number | null;
  attempt_channel?: NoticeChannel | null;
  created_ms: number;
  updated_ms: number;
}

export interface NoticeView {
  id: string;
  carrier: string;
  awb: string;
  event: NoticeKind;
  channel: NoticeChannel | null;
  template: string | null;
  language: string;
  status: NoticeStatus;
  detail: string | null;
  at: string;
}

export const noticeViewOf = (d: NoticeDoc): NoticeView => ({
  id: d.id, carrier: d.carrier, awb: d.awb, event: d.kind, channel: d.channel, template: d.template, language: d.language,
  status: d.status, detail: d.detail, at: new Date(d.updated_ms).toISOString(),
});

export const noticeKeys = {
  notice: (prefix: string, id: string) => `bnotice:{${prefix}}:${id}`,
  list: (prefix: string) => `bnotices:{${prefix}}`,
  shipmentList: (prefix: string, carrier: string, awb: string) => `bnotices:{${prefix}}:${carrier}:${awb}`,
  /** Send times of a shipment's notices (the daily cap). */
  sent: (prefix: string, carrier: string, awb: string) => `bnotice-sent:{${prefix}}:${carrier}:${awb}`,
  settings: (prefix: string) => `bnotice-settings:{${prefix}}`,
  stops: (prefix: string) => `bnotice-stops:{${prefix}}`,
  used: (prefix: string, periodStart: string) => `bnotice-used:{${prefix}}:${periodStart}`,
  overTold: (prefix: string, periodStart: string) => `bnotice-over:{${prefix}}:${periodStart}`,
  /** Per phone (a digest): the keys that notified it lately, for a STOP reply that names only the number. */
  senders: (phoneDigest: string) => `bnotice-senders:{${phoneDigest}}`,
  /** Members `prefix|id`, due when the notice may be tried. */
  due: () => 'bnotices-due',
} as const;

/** Stable per key, shipment and event: the same change seen twice (a re-delivered event, a restart) is one notice. */
export function noticeIdOf(prefix: string, mode: KeyMode, carrier: string, awb: string, dedupeKey: string): string {
  return `ntc_${createHash('sha256').update(`${prefix}|${mode}|${carrier}|${awb}|${dedupeKey}`).digest('base64url').slice(0, 24)}`;
}

/** The suppression list's entry of a phone or address for a key: a digest, so the list holds no contact. */
export function stopDigestOf(prefix: string, address: string): string {
  return createHash('sha256').update(`${prefix}|${address.toLowerCase()}`).digest('hex');
}

const SENDER_KEEP_MS = 30 * DAY_MS;

const phoneDigestOf = (phone: string) => createHash('sha256').update(`phone|${phone}`).digest('hex');

export class NoticeStore {
  readonly kv: Kv;
  constructor(kv: Kv) {
    this.kv = kv;
  }

  /**
   * Creates the notice unless it exists, and lists it, in one atomic step; then makes it due.
   * Answers whether it was new. The same event again (re-delivered after a crash) adds nothing, but
   * makes a notice due again that was never tried: a crash between the two steps would otherwise
   * leave it made and never sent.
   */
  async add(doc: NoticeDoc, dueMs: number): Promise<boolean> {
    const prefix = doc.key_prefix;
    const key = noticeKeys.notice(prefix, doc.id);
    const existing = await this.kv.transact([key], ([current]) => (current ? { result: current as NoticeDoc } : {
      writes: [{ key, value: doc, ttlMs: NOTICE_KEEP_MS }],
      listPushes: [
        { key: noticeKeys.list(prefix), value: doc.id, keep: LIST_KEEP },
        { key: noticeKeys.shipmentList(prefix, doc.carrier, doc.awb), value: doc.id, keep: 100 },
      ],
      result: null,
    }));
    const neverTried = existing !== null && existing.status === 'queued' && existing.attempt_started_ms == null && existing.channel === null;
    if (existing === null || neverTried) await this.kv.schedule(noticeKeys.due(), `${prefix}|${doc.id}`, dueMs);
    return existing === null;
  }

  get(prefix: string, id: string): Promise<NoticeDoc | null> {
    return this.kv.get<NoticeDoc>(noticeKeys.notice(prefix, id));
  }

  /** Writes the notice's new state (kept a year from now). */
  async put(doc: NoticeDoc): Promise<void> {
    await this.kv.set(noticeKeys.notice(doc.key_prefix, doc.id), doc, NOTICE_KEEP_MS);
  }

  /** The key's notices, newest first (`carrier`+`awb`: that shipment's); a page after `cursor` (an offset). */
  async list(prefix: string, filter: { carrier?: string; awb?: string }, cursor: number, limit: number): Promise<{ items: NoticeView[]; next: number | null }> {
    const key = filter.carrier && filter.awb ? noticeKeys.shipmentList(prefix, filter.carrier, filter.awb) : noticeKeys.list(prefix);
    const ids = await this.kv.listRange<string>(key, cursor + limit + 1);
    const page = ids.slice(cursor, cursor + limit);
    const docs = await this.kv.getMany<NoticeDoc>(page.map((id) => noticeKeys.notice(prefix, id)));
    const items = docs.filter((d): d is NoticeDoc => d !== null).map(noticeViewOf);
    return { items, next: ids.length > cursor + limit ? cursor + limit : null };
  }

  async settings(prefix: string): Promise<NoticeSettings> {
    return (await this.kv.get<NoticeSettings>(noticeKeys.settings(prefix))) ?? DEFAULT_NOTICE_SETTINGS;
  }

  async setSettings(prefix: string, settings: NoticeSettings): Promise<void> {
    await this.kv.set(noticeKeys.settings(prefix), settings);
  }

  /**
   * Takes one of the shipment's notices of the IST day for notice `id` (the daily cap), in one atomic
   * step: false when the day is full. A notice that already holds one keeps it (a retry).
   */
  async takeDaySlot(prefix: string, carrier: string, awb: string, id: string, nowMs: number): Promise<boolean> {
    return this.kv.update<DaySlots, boolean>(noticeKeys.sent(prefix, carrier, awb), (doc) => {
      const next = takeDaySlot(doc, id, nowMs);
      return next ? { next, result: true, ttlMs: 2 * DAY_MS } : { result: false };
    });
  }

  /** Gives a day's slot back (the notice could not be sent on any channel). */
  async giveDaySlot(prefix: string, carrier: string, awb: string, id: string): Promise<void> {
    await this.kv.update<DaySlots, void>(noticeKeys.sent(prefix, carrier, awb), (doc) => (
      doc?.ids.includes(id) ? { next: { ...doc, ids: doc.ids.filter((x) => x !== id) }, result: undefined, ttlMs: 2 * DAY_MS } : { result: undefined }));
  }

  /** Stops every notice of the key to this phone (E.164) or address. */
  async stop(prefix: string, address: string): Promise<void> {
    await this.stopDigest(prefix, stopDigestOf(prefix, address));
  }

  /** The same, by the digest an unsubscribe token carries. */
  async stopDigest(prefix: string, digest: string): Promise<void> {
    await this.kv.setAdd(noticeKeys.stops(prefix), digest);
  }

  async stopped(prefix: string): Promise<ReadonlySet<string>> {
    return new Set(await this.kv.setMembers(noticeKeys.stops(prefix)));
  }

  /** Keys that sent to a phone are remembered 30 days: a STOP after that has no notice to answer. */
  async rememberSender(phone: string, prefix: string, atMs: number): Promise<void> {
    await this.kv.update<Record<string, number>, void>(noticeKeys.senders(phoneDigestOf(phone)), (doc) => ({
      next: { ...Object.fromEntries(Object.entries(doc ?? {}).filter(([, ms]) => atMs - ms < SENDER_KEEP_MS)), [prefix]: atMs },
      result: undefined, ttlMs: SENDER_KEEP_MS,
    }));
  }

  /** The keys that notified a phone in the last 30 days. */
  async sendersOf(phone: string): Promise<string[]> {
    return Object.keys((await this.kv.get<Record<string, number>>(noticeKeys.senders(phoneDigestOf(phone)))) ?? {});
  }

  /** Notices sent in the key's period. */
  async used(prefix: string, periodStart: string): Promise<number> {
    return (await this.kv.get<number>(noticeKeys.used(prefix, periodStart))) ?? 0;
  }

  /**
   * Counts a sent notice against the period's allowance. The check before a send reads the count,
   * so sends at the same moment in several processes can pass the allowance by a few (at most the
   * notices in flight): a counter per send keeps 500 notices a second cheap.
   */
  async countUsed(prefix: string, periodStart: string): Promise<number> {
    return this.kv.increment(noticeKeys.used(prefix, periodStart), 120 * DAY_MS);
  }

  /** True once per key and period: the first caller tells the key holder the allowance is spent. */
  async firstOver(prefix: string, periodStart: string): Promise<boolean> {
    return (await this.kv.increment(noticeKeys.overTold(prefix, periodStart), 120 * DAY_MS)) === 1;
  }
}
