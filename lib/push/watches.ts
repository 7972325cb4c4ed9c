import type { StandingOf } from '../access/standing.ts';
import { parseAwb, type Awb, type TrackingRecord } from '../schemas/index.ts';
import { snapshotOf, type ShipmentSnapshot } from './change.ts';
import type { WebhookEvent } from './events.ts';
import type { Kv } from '../kv/index.ts';
import { parseShipmentId, pushKeys, shipmentIdOf } from './keys.ts';
import { DAY_MS } from '../time/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DEFAULT_RUNNING_LATE_BELOW } from './running-late.ts';
import { orderIndexKey } from './page-links.ts';

/** A watch ends 60 days after it began, or 3 days after the shipment reached a terminal state. */
export const WATCH_MAX_MS = 60 * DAY_MS;
export const WATCH_AFTER_TERMINAL_MS = 3 * DAY_MS;

/** A watch as stored: what the customer sees, plus detection state and its outbox. */
export interface WatchDoc {
  key_prefix: string;
  mode: KeyMode;
  carrier: string;
  awb: string;
  watched_since_ms: number;
  expires_ms: number;
  terminal_ms: number | null;
  snapshot: ShipmentSnapshot;
  /** The sequence of the latest event; continues if the key watches the shipment again later. */
  sequence: number;
  /** Events made but not yet on the event log, oldest first (written in the same step as the state). */
  outbox: WebhookEvent[];
  /** The predicted delivery day last told (or first seen) and when it was told: tracking.eta_changed. */
  eta_date?: string | null;
  eta_sent_ms?: number | null;
  /** The day the shop promised its customer (IST, YYYY-MM-DD), null: none (contracts.md "A shop's promise"). */
  promised_by?: string | null;
  /** tracking.running_late when the on-time probability falls below this; absent: the default 0.5. */
  running_late_below?: number;
  /** running_late was told and the probability has not come back to the threshold since. */
  late_told?: boolean;
  /** The shop's order this parcel belongs to (its order page lists every watched parcel of it); absent: none. */
  order_id?: string | null;
  /** The language the shop's customer reads (the tracking page's default); absent: none given. */
  language?: string | null;
}

/** Per watched shipment: its watchers (key prefix → end of watch) and what the poller needs. */
export interface ShipmentDoc {
  mode: KeyMode;
  carrier: string;
  awb: string;
  watchers: Record<string, number>;
  terminal: boolean;
  last_polled_ms: number;
}

export interface WatchView {
  carrier: string;
  awb: string;
  status: 'active' | 'ended';
  watched_since: string;
  expires_at: string;
  promised_by: string | null;
  running_late_below: number;
  order_id: string | null;
  language: string | null;
}

export function watchView(doc: WatchDoc, nowMs: number): WatchView {
  return {
    carrier: doc.carrier,
    awb: doc.awb,
    status: nowMs < doc.expires_ms ? 'active' : 'ended',
    watched_since: new Date(doc.watched_since_ms).toISOString(),
    expires_at: new Date(doc.expires_ms).toISOString(),
    ...promiseOfWatch(doc),
    order_id: doc.order_id ?? null,
    language: doc.language ?? null,
  };
}

/** A watch's promise settings, defaults filled in (watches made before them have neither). */
export function promiseOfWatch(doc: Pick<WatchDoc, 'promised_by' | 'running_late_below'>): WatchPromise {
  return { promised_by: doc.promised_by ?? null, running_late_below: doc.running_late_below ?? DEFAULT_RUNNING_LATE_BELOW };
}

/** What a watch call may set: the shop's promise and the threshold of tracking.running_late. */
export interface WatchPromise {
  promised_by: string | null;
  running_late_below: number;
}

export function expiryOf(watchedSinceMs: number, terminalMs: number | null): number {
  const max = watchedSinceMs + WATCH_MAX_MS;
  return terminalMs === null ? max : Math.min(max, terminalMs + WATCH_AFTER_TERMINAL_MS);
}

export interface NewWatch {
  keyPrefix: string;
  mode: KeyMode;
  carrier: string;
  awb: Awb;
  /** The record the watch call answered with (null: no scans yet), and the time of its poll. */
  record: TrackingRecord | null;
  polledMs: number;
  terminal: boolean;
  nowMs: number;
  /** The promise settings given (absent: none, the default threshold). */
  promise?: Partial<WatchPromise>;
  /** The tracking page's settings: the shop's order and its customer's language (absent: none). */
  page?: { order_id?: string | null; language?: string | null };
}

export interface WatchListPage {
  items: WatchView[];
  next_cursor: string | null;
}

/** Watches: create, read, list, end. Change detection (detector.ts) updates their state. */
export class WatchStore {
  private readonly kv: Kv;
  private readonly onRemoved: ((prefix: string, carrier: string, awb: string) => Promise<void>) | undefined;
  /** `onRemoved`: a watch ended before its time (deleted, its key revoked); what hangs on it goes too. */
  constructor(kv: Kv, onRemoved?: (prefix: string, carrier: string, awb: string) => Promise<void>) {
    this.kv = kv;
    this.onRemoved = onRemoved;
  }

  /**
   * Creates the watch unless the key already watches the shipment (then `created: false` and the
   * existing watch). The indexes are written first: one pointing at a watch that was never made is
   * skipped by readers, while a watch no index names would never be found.
   */
  async create(input: NewWatch): Promise<{ created: boolean; watch: WatchView }> {
    const awb = input.awb;
    const shipmentId = shipmentIdOf(input.mode, input.carrier, awb);
    const docKey = pushKeys.watch(input.keyPrefix, input.carrier, awb);
    const existing = await this.kv.get<WatchDoc>(docKey);
    if (existing && existing.expires_ms > input.nowMs) return { created: false, watch: watchView(existing, input.nowMs) };

    const terminalMs = input.terminal ? input.polledMs : null;
    const expiresMs = expiryOf(input.nowMs, terminalMs);
    await this.kv.setAdd(pushKeys.watchIndex(input.keyPrefix), `${input.carrier}:${awb}`);
    await this.kv.update<ShipmentDoc, void>(pushKeys.shipment(shipmentId), (doc) => ({
      next: {
        mode: input.mode, carrier: input.carrier, awb,
        watchers: { ...doc?.watchers, [input.keyPrefix]: expiresMs },
        terminal: doc?.terminal ?? input.terminal,
        last_polled_ms: Math.max(doc?.last_polled_ms ?? 0, input.polledMs),
      },
      result: undefined,
    }));
    await this.kv.setAdd(pushKeys.watched(), shipmentId);
    return this.kv.update<WatchDoc, { created: boolean; watch: WatchView }>(docKey, (current) => {
      if (current && current.expires_ms > input.nowMs) return { result: { created: false, watch: watchView(current, input.nowMs) } };
      const doc: WatchDoc = {
        key_prefix: input.keyPrefix, mode: input.mode, carrier: input.carrier, awb,
        watched_since_ms: input.nowMs, expires_ms: expiresMs, terminal_ms: terminalMs,
        snapshot: snapshotOf(input.record, input.polledMs),
        sequence: current?.sequence ?? 0,
        outbox: current?.outbox ?? [],
        // The day the watch's answer showed is the first one told: a move before the first poll is news.
        eta_date: input.record?.insights.prediction?.delivery_date ?? null,
        eta_sent_ms: null,
        ...promiseOfWatch(input.promise ?? {}),
        late_told: false,
        order_id: input.page?.order_id ?? null,
        language: input.page?.language ?? null,
      };
      return { next: doc, result: { created: true, watch: watchView(doc, input.nowMs) } };
    });
  }

  /**
   * Changes an active watch's promise settings (a watch call again naming them); the fields not
   * given stay. A changed promise or threshold is a new question: running_late may be told again.
   * Null when the key has no active watch of the shipment.
   */
  async setPromise(prefix: string, carrier: string, awb: Awb, change: Partial<WatchPromise>, nowMs: number): Promise<WatchView | null> {
    return this.kv.update<WatchDoc, WatchView | null>(pushKeys.watch(prefix, carrier, awb), (doc) => {
      if (!doc || doc.expires_ms <= nowMs) return { result: null };
      const before = promiseOfWatch(doc);
      const after = { ...before, ...change };
      if (after.promised_by === before.promised_by && after.running_late_below === before.running_late_below) {
        return { result: watchView(doc, nowMs) };
      }
      const next: WatchDoc = { ...doc, ...after, late_told: false };
      return { next, result: watchView(next, nowMs) };
    });
  }

  async get(prefix: string, carrier: string, awb: Awb, nowMs: number): Promise<WatchView | null> {
    const doc = await this.getDoc(prefix, carrier, awb);
    return doc ? watchView(doc, nowMs) : null;
  }

  /** The watch as stored (the tracking page reads it), or null. */
  getDoc(prefix: string, carrier: string, awb: string): Promise<WatchDoc | null> {
    return this.kv.get<WatchDoc>(pushKeys.watch(prefix, carrier, awb));
  }

  /** The key's watches ordered by carrier and number, `limit` a page; the cursor is the last one's name. */
  async list(prefix: string, nowMs: number, options: { cursor?: string | null; limit: number }): Promise<WatchListPage> {
    const after = options.cursor ? Buffer.from(options.cursor, 'base64url').toString('utf8') : '';
    const names = (await this.kv.setMembers(pushKeys.watchIndex(prefix))).filter((n) => n > after).sort();
    const items: WatchView[] = [];
    let last: string | null = null;
    // A page of names at a time: an index entry whose watch was never made is skipped.
    for (let i = 0; i < names.length && items.length < options.limit; i += options.limit) {
      const page = names.slice(i, i + options.limit);
      const docs = await this.kv.getMany<WatchDoc>(page.map((n) => pushKeys.watchOf(prefix, n)));
      for (let j = 0; j < page.length && items.length < options.limit; j++) {
        last = page[j]!;
        if (docs[j]) items.push(watchView(docs[j]!, nowMs));
      }
    }
    const more = last !== null && names.at(-1)! > last;
    return { items, next_cursor: more ? Buffer.from(last!, 'utf8').toString('base64url') : null };
  }

  /** Ends a watch now (DELETE). False when the key did not watch the shipment. */
  async remove(prefix: string, mode: KeyMode, carrier: string, awb: Awb): Promise<boolean> {
    const upper = awb;
    const removed = await this.kv.update<WatchDoc, WatchDoc | null>(pushKeys.watch(prefix, carrier, upper), (doc) => ({
      next: doc ? null : undefined, result: doc,
    }));
    await this.kv.setRemove(pushKeys.watchIndex(prefix), `${carrier}:${upper}`);
    // Its order's page lists it no more (the page of an order with no watch left is gone).
    if (removed?.order_id) await this.kv.setRemove(orderIndexKey(prefix, removed.order_id), `${carrier}:${upper}`);
    await this.kv.update<ShipmentDoc, void>(pushKeys.shipment(shipmentIdOf(mode, carrier, upper)), (doc) => {
      if (!doc || !(prefix in doc.watchers)) return { result: undefined };
      const watchers = { ...doc.watchers };
      delete watchers[prefix];
      return { next: Object.keys(watchers).length ? { ...doc, watchers } : null, result: undefined };
    });
    await this.onRemoved?.(prefix, carrier, upper);
    return removed !== null;
  }

  /**
   * Watched shipments the poller should re-poll: not terminal and watched until later than now by
   * a key that is active (a paused key's watches cost no carrier polls). Shipments nobody watches
   * any more leave the list; those watched only by paused keys stay, for when they resume.
   */
  async pollable(nowMs: number, standing: StandingOf): Promise<{ carrier: string; awb: string; mode: KeyMode; lastPolledMs: number }[]> {
    const ids = await this.kv.setMembers(pushKeys.watched());
    const docs = await this.kv.getMany<ShipmentDoc>(ids.map((id) => pushKeys.shipment(id)));
    const due: { carrier: string; awb: string; mode: KeyMode; lastPolledMs: number }[] = [];
    // One question per key per pass, however many shipments it watches.
    const asked = new Map<string, Promise<boolean>>();
    const active = (prefix: string) => {
      let answer = asked.get(prefix);
      if (!answer) asked.set(prefix, answer = standing(prefix, nowMs).then((s) => s === 'active'));
      return answer;
    };
    for (let i = 0; i < ids.length; i++) {
      const doc = docs[i];
      const watchers = doc ? Object.entries(doc.watchers).filter(([, until]) => until > nowMs).map(([prefix]) => prefix) : [];
      if (!doc || watchers.length === 0 || doc.terminal) {
        await this.kv.setRemove(pushKeys.watched(), ids[i]!);
        continue;
      }
      if (!(await Promise.all(watchers.map(active))).some(Boolean)) continue;
      const parsed = parseShipmentId(ids[i]!);
      if (parsed) due.push({ ...parsed, lastPolledMs: doc.last_polled_ms });
    }
    return due;
  }

  /** Every watch of a key ends now (the key was revoked). */
  async removeAll(prefix: string, mode: KeyMode): Promise<number> {
    const names = await this.kv.setMembers(pushKeys.watchIndex(prefix));
    for (const name of names) {
      const split = name.indexOf(':');
      // The index holds what add() wrote: a parsed Awb, so the parse always succeeds.
      const awb = parseAwb(name.slice(split + 1));
      if (awb) await this.remove(prefix, mode, name.slice(0, split), awb);
    }
    return names.length;
  }
}
