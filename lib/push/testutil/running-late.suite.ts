/**
 * tracking.running_late and a watch's promise through change detection, on each state store
 * (running-late.test.ts: the embedded journal; running-late.services.test.ts: Redis). The delivery
 * model is learned from synthetic deliveries (2 to 5 days in transit), so the probabilities the
 * rule reads are known where it matters: a day already passed is 0, a day 8 days out is 1.
 *
 * Two keys watch one shipment: A without a promise (the carrier EDD's probability counts; the
 * carrier moves its EDD between polls), B with promised_by 8 days out.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCalendar } from '../../calendar/index.ts';
import type { Kv } from '../../kv/index.ts';
import { normalizePoll } from '../../normalize/index.ts';
import {
  buildModel, predictorOf, promiseProbabilityOf, queryFactsOf, WorkdayIndex, type DeliveredShipment, type PlaceLookup,
} from '../../prediction/index.ts';
import { requireAwb, type CarrierPoll, type TrackingRecord } from '../../schemas/index.ts';
import { makePoll, scan } from '../../testutil/polls.ts';
import { product } from '../../testutil/product.ts';
import { DAY_MS, HOUR_MS } from '../../time/index.ts';
import { addDays, istDayOf, istDayStartMs } from '../../time/ist-day.ts';
import { toTrackingRecord } from '../../insights/index.ts';
import { ChangeDetector } from '../detector.ts';
import type { EventLog } from '../event-log.ts';
import type { WebhookEvent } from '../events.ts';
import { EVERY_KEY_ACTIVE } from './receiver.ts';
import { WatchStore } from '../watches.ts';

const A = 'trk_test_AAAAAA1';
const B = 'trk_test_BBBBBB2';
const AWB = '1234567890102';
/** Friday 2026-11-20, 11:30 IST. */
const T0 = Date.parse('2026-11-20T06:00:00.000Z');
const TODAY = istDayOf(T0);
const PROMISE = addDays(TODAY, 8);
const places: PlaceLookup = {
  stateOf: (pin) => ({ '110': 'DL', '560': 'KA' } as Record<string, string>)[pin.slice(0, 3)] ?? null,
  zoneOf: () => 'metro_to_metro',
};
const workdays = new WorkdayIndex(loadCalendar());

/** 300 delivered shipments of the same lane over the 60 days before T0: booked, 10 h to pickup, 48–120 h in transit, 4 h out. */
function history(): DeliveredShipment[] {
  return Array.from({ length: 300 }, (_, i) => {
    const booked = T0 - 60 * DAY_MS + (i * 50 * DAY_MS) / 300;
    const pickup = booked + 10 * HOUR_MS;
    const out = pickup + (48 + (i % 7) * 12) * HOUR_MS;
    return {
      mode: 'test', carrier: 'delhivery', serviceType: 'surface', originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
      deliveredMs: out + 4 * HOUR_MS, seed: i * 7919,
      episodes: [
        { stage: 'awaiting_pickup', enteredMs: booked, leftMs: pickup },
        { stage: 'in_transit', enteredMs: pickup, leftMs: out },
        { stage: 'out_for_delivery', enteredMs: out, leftMs: out + 4 * HOUR_MS },
      ],
    } satisfies DeliveredShipment;
  });
}

/** When the shipment is delivered, for the polls that say so. */
const DELIVERED_MS = T0 + 9 * DAY_MS + 3 * HOUR_MS;

/** The shipment as polled at `polledMs`: picked up at T0 (a hub scan per day since), delivered when `delivered`; the carrier's EDD `edd`. */
function pollAt(polledMs: number, edd: string, delivered = false): CarrierPoll {
  const at = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
  const scans = [
    scan({ raw_status: 'Manifested', raw_code: 'UD', remarks: 'Consignment Manifested', occurred_at: at(T0 - 10 * HOUR_MS), location: 'Delhi' }),
    scan({ raw_status: 'In Transit', raw_code: 'UD', remarks: 'Shipment picked up', occurred_at: at(T0), location: 'Delhi' }),
  ];
  for (let d = 1; T0 + d * DAY_MS < Math.min(polledMs - HOUR_MS, DELIVERED_MS) && d < 30; d++) {
    scans.push(scan({ raw_status: 'In Transit', raw_code: 'UD', remarks: 'Bag Received at Facility', occurred_at: at(T0 + d * DAY_MS), location: 'Nagpur' }));
  }
  if (delivered) scans.push(scan({ raw_status: 'Delivered', raw_code: 'DL', remarks: 'Delivered', occurred_at: at(DELIVERED_MS), location: 'Bengaluru' }));
  const base = makePoll({ awb: AWB, polled_at: new Date(polledMs).toISOString(), scans });
  return { ...base, shipment: { ...base.shipment!, estimated_delivery_at: new Date(istDayStartMs(edd) + 18 * HOUR_MS).toISOString() } };
}

class CollectingLog implements EventLog {
  events: WebhookEvent[] = [];
  async publish(events: readonly WebhookEvent[]) { this.events.push(...events); }
  async close() {}
}

interface Body {
  type: string;
  data: { sequence: number; tracking: TrackingRecord; promised_by?: string | null; on_time_probability?: number; delivery_date?: string };
}

/** `open` gives a fresh store and its cleanup. */
export function runningLateSuite(name: string, open: () => Promise<{ kv: Kv; cleanup(): Promise<void> }>): void {
  describe(`tracking.running_late through change detection (${name})`, () => {
    let kv: Kv;
    let cleanup: () => Promise<void>;
    let log: CollectingLog;
    let detector: ChangeDetector;
    let watches: WatchStore;
    const model = buildModel(history(), { modelAtMs: T0, windowDays: 90, places, workdays });
    const predictor = predictorOf(() => model, places);

    beforeEach(async () => {
      ({ kv, cleanup } = await open());
      log = new CollectingLog();
      detector = new ChangeDetector({ kv, standing: EVERY_KEY_ACTIVE, events: log, lanes: { get: async () => null }, clock: () => T0, predictor });
      watches = new WatchStore(kv);
      const first = normalizePoll(pollAt(T0 + HOUR_MS, addDays(TODAY, 3)), product.rules);
      if (first.kind !== 'found') throw new Error('fixture');
      const record = toTrackingRecord(first.shipment.record, first.shipment.facts, { nowMs: T0 + HOUR_MS, lane: null, cached: false, stale: false });
      for (const [prefix, promise] of [[A, {}], [B, { promised_by: PROMISE }]] as const) {
        const made = await watches.create({
          keyPrefix: prefix, mode: 'test', carrier: 'delhivery', awb: requireAwb(AWB), record, polledMs: T0 + HOUR_MS, terminal: false, nowMs: T0 + HOUR_MS, promise,
        });
        expect(made.watch).toMatchObject({ promised_by: prefix === B ? PROMISE : null, running_late_below: 0.5 });
      }
    });
    afterEach(async () => { await cleanup(); });

    const handle = (poll: CarrierPoll) => detector.handle(poll, 'test', normalizePoll(poll, product.rules));
    const bodiesOf = (prefix: string) => log.events.filter((e) => e.key_prefix === prefix).map((e) => JSON.parse(e.body) as Body);
    const lateOf = (prefix: string) => bodiesOf(prefix).filter((b) => b.type === 'tracking.running_late');

    it('fires once per watch on a fall below the threshold, not on repeats, again after recovery, never after delivery; B’s records carry its promise', async () => {
      const yesterday = addDays(TODAY, -1);
      const far = addDays(TODAY, 8);
      // 1. In transit, the carrier's EDD already passed: A's probability is 0 → running_late; B's promise (8 days out) is safe.
      await handle(pollAt(T0 + 12 * HOUR_MS, yesterday));
      expect(lateOf(A).map((b) => [b.data.promised_by, b.data.on_time_probability])).toEqual([[null, 0]]);
      expect(lateOf(B)).toEqual([]);
      // 2. The same a little later: a repeat, nothing told.
      await handle(pollAt(T0 + 14 * HOUR_MS, yesterday));
      // 3. The carrier moves its EDD 8 days out: A recovers (nothing told).
      await handle(pollAt(T0 + 16 * HOUR_MS, far));
      expect(lateOf(A)).toHaveLength(1);
      // Two days on, a new hub scan: both keys are told (tracking.updated), B's promise still safe, A still on time.
      await handle(pollAt(T0 + 2 * DAY_MS, far));
      expect(lateOf(A)).toHaveLength(1);
      // 4. Nine days on, still in transit, both days passed: A falls again, B falls for the first time.
      await handle(pollAt(T0 + 9 * DAY_MS, addDays(TODAY, 8)));
      expect(lateOf(A)).toHaveLength(2);
      expect(lateOf(B).map((b) => [b.data.promised_by, b.data.on_time_probability])).toEqual([[PROMISE, 0]]);
      // 5. A's carrier moves the EDD out again (A recovers), then 6. it is delivered with an EDD that has passed: nothing.
      await handle(pollAt(T0 + 9 * DAY_MS + 2 * HOUR_MS, addDays(TODAY, 20)));
      await handle(pollAt(T0 + 9 * DAY_MS + 4 * HOUR_MS, yesterday, true));
      await handle(pollAt(T0 + 9 * DAY_MS + 6 * HOUR_MS, yesterday, true));
      expect(lateOf(A)).toHaveLength(2);
      expect(lateOf(B)).toHaveLength(1);
      expect(bodiesOf(A).at(-1)?.type).toBe('tracking.delivered');
      expect(bodiesOf(B).at(-1)?.type).toBe('tracking.delivered');

      // The event's data: the record, the promise (or null), the probability, the predicted day.
      for (const body of [...lateOf(A), ...lateOf(B)]) {
        expect(body.data.delivery_date).toBe(body.data.tracking.insights.prediction!.delivery_date);
        expect(body.data.on_time_probability).toBeLessThan(0.5);
      }
      // One sequence per key and shipment, the running_late events in it.
      for (const prefix of [A, B]) expect(bodiesOf(prefix).map((b) => b.data.sequence)).toEqual(bodiesOf(prefix).map((_, i) => i + 1));
      // B's records carry its promise (1 while the day is days ahead, 0 once it passed); A's none.
      const promises = bodiesOf(B).flatMap((b) => (b.data.tracking.insights.prediction ? [b.data.tracking.insights.prediction.promise] : []));
      expect(promises.length).toBeGreaterThanOrEqual(2);
      expect(promises[0]).toEqual({ promised_by: PROMISE, on_time_probability: 1 });
      expect(promises.at(-1)).toEqual({ promised_by: PROMISE, on_time_probability: 0 });
      for (const b of bodiesOf(A)) expect(b.data.tracking.insights.prediction?.promise).toBeUndefined();
    });

    it('a key paused meanwhile is told at its catch-up: the record with its promise, and running_late if it fell', async () => {
      const paused = new Set([B]);
      detector = new ChangeDetector({
        kv, events: log, lanes: { get: async () => null }, clock: () => T0, predictor,
        standing: async (prefix) => (paused.has(prefix) ? 'suspended' : 'active'),
      });
      // Nine days on, B's promise has passed while B was paused: B hears nothing, A what changed.
      const poll = pollAt(T0 + 9 * DAY_MS, addDays(TODAY, 20));
      await handle(poll);
      expect(bodiesOf(B)).toEqual([]);
      expect(bodiesOf(A).length).toBeGreaterThan(0);
      // Resumed: the catch-up reads the shipment's current record (as the cache answers it) and its promise.
      paused.delete(B);
      const found = normalizePoll(poll, product.rules);
      if (found.kind !== 'found') throw new Error('fixture');
      const nowMs = Date.parse(poll.polled_at);
      const prediction = predictor.predictRecord(found.shipment.record, found.shipment.facts, 'test', nowMs);
      const record = toTrackingRecord(found.shipment.record, found.shipment.facts, { nowMs, lane: null, cached: true, stale: false, prediction });
      const query = queryFactsOf(found.shipment.record, found.shipment.facts);
      expect(await detector.catchUp(B, async () => ({
        record, promiseProbability: (day) => promiseProbabilityOf(predictor, query, found.shipment.facts, 'test', nowMs, day),
      }))).toBe(2);
      expect(bodiesOf(B).map((b) => b.type)).toEqual(['tracking.updated', 'tracking.running_late']);
      for (const b of bodiesOf(B)) expect(b.data.tracking.insights.prediction!.promise).toEqual({ promised_by: PROMISE, on_time_probability: 0 });
    });

    it('a changed promise is a new question: told again when the new day is also at risk; unchanged settings keep the state', async () => {
      // B's promise: today. In transit since this morning, delivered in 2 to 5 days: below 0.5 → told.
      expect(await watches.setPromise(B, 'delhivery', requireAwb(AWB), { promised_by: TODAY }, T0)).toMatchObject({ promised_by: TODAY, running_late_below: 0.5 });
      await handle(pollAt(T0 + 2 * HOUR_MS, addDays(TODAY, 8)));
      expect(lateOf(B).map((b) => b.data.promised_by)).toEqual([TODAY]);
      // The same settings again change nothing: no second event.
      await watches.setPromise(B, 'delhivery', requireAwb(AWB), { promised_by: TODAY, running_late_below: 0.5 }, T0);
      await handle(pollAt(T0 + 3 * HOUR_MS, addDays(TODAY, 8)));
      expect(lateOf(B)).toHaveLength(1);
      // Tomorrow instead: a new question, still at risk → told again.
      await watches.setPromise(B, 'delhivery', requireAwb(AWB), { promised_by: addDays(TODAY, 1) }, T0);
      await handle(pollAt(T0 + 4 * HOUR_MS, addDays(TODAY, 8)));
      expect(lateOf(B).map((b) => b.data.promised_by)).toEqual([TODAY, addDays(TODAY, 1)]);
      // A threshold of 0 never tells; a watch of another key is not touched.
      await watches.setPromise(B, 'delhivery', requireAwb(AWB), { promised_by: TODAY, running_late_below: 0 }, T0);
      await handle(pollAt(T0 + 5 * HOUR_MS, addDays(TODAY, 8)));
      expect(lateOf(B)).toHaveLength(2);
      expect(lateOf(A)).toEqual([]);
      expect(await watches.get(A, 'delhivery', requireAwb(AWB), T0)).toMatchObject({ promised_by: null, running_late_below: 0.5 });
    });
  });
}
