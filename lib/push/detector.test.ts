import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { normalizePoll, scanEventIds } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { makePoll, scan } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { ChangeDetector } from './detector.ts';
import type { EventLog } from './event-log.ts';
import type { WebhookEvent } from './events.ts';
import { pushKeys } from './keys.ts';
import { EmbeddedKv } from '../kv/index.ts';
import { WatchStore, type WatchDoc } from './watches.ts';
import { EVERY_KEY_ACTIVE } from './testutil/receiver.ts';
import { requireAwb } from '../schemas/index.ts';

const PREFIX = 'trk_test_Ab3dE9x';
const AWB = '1234567890102';
const H = 3_600_000;
const T0 = Date.parse('2026-11-20T06:00:00.000Z');

/** The shipment's scans up to step `n` (0 booked … 4 delivered), polled at `polledMs`. */
function pollAt(n: number, polledMs: number): CarrierPoll {
  const steps = [
    { raw_status: 'Manifested', remarks: 'Consignment Manifested' },
    { raw_status: 'In Transit', remarks: 'Shipment picked up' },
    { raw_status: 'In Transit', remarks: 'Shipment Recieved at Origin Center' },
    { raw_status: 'Dispatched', remarks: 'Out for delivery' },
    { raw_status: 'Delivered', remarks: 'Delivered' },
  ];
  const scans = steps.slice(0, n + 1).map((s, i) => scan({ ...s, raw_code: s.raw_status === 'Delivered' ? 'DL' : 'UD', occurred_at: new Date(T0 + i * 10 * H).toISOString().replace('Z', '+00:00'), location: 'Delhi' }));
  return makePoll({ awb: AWB, polled_at: new Date(polledMs).toISOString(), scans });
}

class CollectingLog implements EventLog {
  events: WebhookEvent[] = [];
  failNext = false;
  async publish(events: readonly WebhookEvent[]) {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('event log away');
    }
    this.events.push(...events);
  }
  async close() {}
}

describe('change detection', () => {
  let dir: string;
  let kv: EmbeddedKv;
  let log: CollectingLog;
  let detector: ChangeDetector;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'push-detect-'));
    kv = new EmbeddedKv(dir);
    log = new CollectingLog();
    detector = new ChangeDetector({ kv, standing: EVERY_KEY_ACTIVE, events: log, lanes: { get: async () => null }, clock: () => T0 });
    const first = pollAt(0, T0 + H);
    const found = normalizePoll(first, product.rules);
    if (found.kind !== 'found') throw new Error('fixture');
    const { toTrackingRecord } = await import('../insights/index.ts');
    await new WatchStore(kv).create({
      keyPrefix: PREFIX, mode: 'test', carrier: 'delhivery', awb: requireAwb(AWB),
      record: toTrackingRecord(found.shipment.record, found.shipment.facts, { nowMs: T0 + H, lane: null, cached: false, stale: false }),
      polledMs: T0 + H, terminal: false, nowMs: T0 + H,
    });
  });
  afterEach(async () => {
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const handle = (poll: CarrierPoll) => detector.handle(poll, 'test', normalizePoll(poll, product.rules));

  it('a re-delivered poll, a second detector and an older poll arriving late make no second event', async () => {
    const picked = pollAt(1, T0 + 20 * H);
    expect(await handle(picked)).toBe(1);
    expect(await handle(picked)).toBe(0);
    const second = new ChangeDetector({ kv, standing: EVERY_KEY_ACTIVE, events: log, lanes: { get: async () => null }, clock: () => T0 });
    expect(await second.handle(picked, 'test', normalizePoll(picked, product.rules))).toBe(0);
    // An older poll (it knew less) arrives after a newer one: no event, nothing moves back.
    expect(await handle(pollAt(2, T0 + 30 * H))).toBe(1);
    expect(await handle(pollAt(1, T0 + 25 * H))).toBe(0);
    expect(log.events.map((e) => e.sequence)).toEqual([1, 2]);
    // The same poll with nothing new, later: no event either.
    expect(await handle(pollAt(2, T0 + 31 * H))).toBe(0);
  });

  it('a watch that saw events under their ids from before location was part of the id does not announce them again', async () => {
    expect(await handle(pollAt(2, T0 + 21 * H))).toBe(1);
    // What a watch stored before the upgrade: the same events under their legacy ids.
    const legacyOf = new Map(pollAt(2, 0).scans.map((s) => {
      const { id, legacyId } = scanEventIds('delhivery', AWB, s);
      return [id, legacyId];
    }));
    await kv.update<WatchDoc, null>(pushKeys.watch(PREFIX, 'delhivery', AWB), (doc) => ({
      next: { ...doc!, snapshot: { ...doc!.snapshot, event_ids: doc!.snapshot.event_ids.map((id) => legacyOf.get(id)!) } },
      result: null,
    }));
    expect(await handle(pollAt(3, T0 + 31 * H))).toBe(1);
    const newEvents = JSON.parse(log.events[1]!.body).data.new_events as { status_text: string }[];
    expect(newEvents.map((e) => e.status_text)).toEqual(['Dispatched']);
    // Its snapshot now holds the new ids: the same poll later announces nothing.
    expect(await handle(pollAt(3, T0 + 32 * H))).toBe(0);
  });

  it('is_stuck turning true is a change even without a new scan', async () => {
    expect(await handle(pollAt(2, T0 + 21 * H))).toBe(1);
    // The last scan was at T0 + 20 h: stuck after T0 + 92 h.
    expect(await handle(pollAt(2, T0 + 80 * H))).toBe(0);
    expect(await handle(pollAt(2, T0 + 93 * H))).toBe(1);
    expect(await handle(pollAt(2, T0 + 99 * H))).toBe(0);
    expect(log.events.map((e) => e.type)).toEqual(['tracking.updated', 'tracking.stuck']);
    expect(JSON.parse(log.events[1]!.body).data.new_events).toEqual([]);
  });

  it('an event the log could not take stays in the outbox and goes first, same id, at the next poll or sweep', async () => {
    log.failNext = true;
    await expect(handle(pollAt(1, T0 + 20 * H))).rejects.toThrow('event log away');
    expect(log.events).toEqual([]);
    // A restart (new store object on the same files) still has it; the sweep hands it over.
    await kv.close();
    kv = new EmbeddedKv(dir);
    detector = new ChangeDetector({ kv, standing: EVERY_KEY_ACTIVE, events: log, lanes: { get: async () => null }, clock: () => T0 });
    expect(await detector.sweep()).toBe(1);
    expect(await detector.sweep()).toBe(0);
    expect(await handle(pollAt(3, T0 + 40 * H))).toBe(1);
    expect(log.events.map((e) => [e.sequence, e.type])).toEqual([[1, 'tracking.updated'], [2, 'tracking.out_for_delivery']]);
  });

  it('delivered ends the watch 3 days later; later polls make no events', async () => {
    expect(await handle(pollAt(4, T0 + 50 * H))).toBe(1);
    expect(log.events[0]!.type).toBe('tracking.delivered');
    const watch = await new WatchStore(kv).get(PREFIX, 'delhivery', requireAwb(AWB), T0 + 50 * H);
    expect(watch?.expires_at).toBe(new Date(T0 + 50 * H + 72 * H).toISOString());
    expect(await new WatchStore(kv).pollable(T0 + 51 * H, EVERY_KEY_ACTIVE)).toEqual([]);
  });
});
