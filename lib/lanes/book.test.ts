import { ShipmentNumbers } from '../compact/shipment-numbers.ts';
import { describe, expect, it } from 'vitest';
import { normalizePoll } from '../normalize/index.ts';
import { product } from '../testutil/product.ts';
import { LaneBook, closureOfShipment } from './book.ts';
import { journeyPoll } from './testutil/journeys.ts';
import type { LaneClosure } from './closure.ts';
import { laneStatsOf } from './window.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS as DAY } from '../time/index.ts';

const NOW = Date.UTC(2026, 10, 20, 12);

function closure(awb: string, transitHours: number, closedAtMs = NOW - DAY, mode: KeyMode = 'live') {
  const poll = journeyPoll({ awb, origin: '110001', destination: '560001', outcome: 'delivered', closedAtMs, transitHours, failedRemarks: [], eddMs: null });
  const result = normalizePoll(poll, product.rules);
  if (result.kind !== 'found') throw new Error('not found');
  return closureOfShipment(result.shipment, mode, Date.parse(poll.polled_at))!;
}

describe('embedded lane book', () => {
  it('gives the window p50 and sample size, each shipment once, sandbox lanes apart', async () => {
    const book = new LaneBook({ clock: () => NOW, ttlMs: 0 });
    expect(await book.get('delhivery:110:560')).toBeNull();
    book.add(closure('A', 72));
    book.add(closure('B', 24));
    expect(await book.get('delhivery:110:560')).toEqual({ median_transit_days: 2, sample_size: 2 });
    book.add(closure('C', 168));
    book.add(closure('A', 96)); // re-polled later: replaces A
    expect(await book.get('delhivery:110:560')).toEqual({ median_transit_days: 4, sample_size: 3 });
    book.add(closure('OLD', 1, NOW - 91 * DAY)); // outside the 90-day window
    expect((await book.get('delhivery:110:560'))?.sample_size).toBe(3);
    expect(await book.get('test:delhivery:110:560')).toBeNull();
    book.add(closure('S', 5, NOW - DAY, 'test'));
    expect(await book.get('test:delhivery:110:560')).toEqual({ median_transit_days: 5 / 24, sample_size: 1 });
    expect((await book.lanesBetween('110', '560', 'live')).map((s) => s.lane)).toEqual(['delhivery:110:560']);
  });
});

/** A new book from `book`'s checkpoint state, its numbering restored first (as the shipment index's is). */
function restored(book: LaneBook): LaneBook {
  const shipments = new ShipmentNumbers();
  shipments.importState(book.shipments.exportState());
  const again = new LaneBook({ clock: () => NOW, ttlMs: 0, shipments });
  again.importState(book.exportState());
  return again;
}

describe('a lane growing past the size from which it keeps its times sorted', () => {
  it('gives laneStatsOf\'s figures below and above it: re-polls replace, a checkpoint round-trips', async () => {
    const book = new LaneBook({ clock: () => NOW, ttlMs: 0 });
    const nowS = Math.floor(NOW / 1000);
    const figures = () => laneStatsOf('delhivery:110:560', book.closures(), nowS, 90);
    // Forty shipments (a lane of more than 32 keeps its times sorted), each re-polled with a longer transit.
    for (let i = 0; i < 40; i++) {
      book.add(closure(`N${i}`, 24 + i));
      expect(book.statsOf('delhivery:110:560')).toEqual(figures());
    }
    for (let i = 0; i < 40; i++) book.add(closure(`N${i}`, 48 + 24 * i));
    expect(book.statsOf('delhivery:110:560')).toEqual(figures());
    const stats = await book.get('delhivery:110:560');
    expect(stats?.sample_size).toBe(40);
    expect(book.closures().map((c) => c.awb).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `N${i}`).sort());
    const again = restored(book);
    expect(await again.get('delhivery:110:560')).toEqual(stats);
    again.add(closure('N3', 500)); // found in the imported lane, not added twice
    expect((await again.get('delhivery:110:560'))?.sample_size).toBe(40);
    const state = book.exportState();
    state.shipments[5] = state.shipments[4]!;
    expect(() => new LaneBook({ clock: () => NOW, shipments: book.shipments }).importState(state)).toThrow(/twice in lane/);
    // A checkpoint's closures name shipments of the numbering restored with them: an unknown number is refused.
    expect(() => new LaneBook({ clock: () => NOW }).importState(book.exportState())).toThrow(/not numbered/);
  });

  it('keeps one AWB on two lanes (two carriers, or test and live) apart', async () => {
    const book = new LaneBook({ clock: () => NOW, ttlMs: 0 });
    book.add(closure('SAME', 24));
    book.add(closure('SAME', 48, NOW - DAY, 'test'));
    book.add(closure('SAME', 72)); // replaces the live one only
    expect(await book.get('delhivery:110:560')).toEqual({ median_transit_days: 3, sample_size: 1 });
    expect(await book.get('test:delhivery:110:560')).toEqual({ median_transit_days: 2, sample_size: 1 });
    expect(restored(book).closures()).toEqual(book.closures());
  });
});

describe('lane book cost on a hot lane', () => {
  const LANE = 'delhivery:110:560';
  const hotClosure = (i: number, closedAtS: number): LaneClosure => ({
    lane: LANE, carrier: 'delhivery', awb: `H${i}`, mode: 'live', outcome: i % 10 === 0 ? 'rto' : 'delivered',
    closedAtS, transitDays: i % 10 === 0 ? null : ((i * 7919) % 1000) / 100, onTime: i % 10 === 0 ? null : ((i % 3 === 0 ? 0 : 1) as 0 | 1),
    firstAttempt: i % 10 === 0 ? null : ((i % 4 === 0 ? 0 : 1) as 0 | 1), ndrReasons: i % 4 === 0 ? ['address_issue'] : [], version: i,
  });

  it('100,000 closures on one lane with a lookup after each never pass over the lane, and give laneStatsOf\'s figures', async () => {
    let now = NOW;
    const book = new LaneBook({ clock: () => now, ttlMs: 60_000 });
    const nowS = Math.floor(NOW / 1000);
    for (let i = 0; i < 100_000; i++) {
      book.add(hotClosure(i, nowS - (i % 80) * 86_400));
      await book.get(LANE);
    }
    expect(book.fullPasses).toBe(0);
    const expected = laneStatsOf(LANE, book.closures(), nowS, 90);
    expect(book.statsOf(LANE)).toEqual(expected);
    expect(expected.closed).toBe(100_000);
    // A re-poll replaces its shipment's closure in the figures without a pass either.
    book.add({ ...hotClosure(5, nowS), transitDays: 99, version: 1e9 });
    expect(book.statsOf(LANE)).toEqual(laneStatsOf(LANE, book.closures(), nowS, 90));
    expect(book.fullPasses).toBe(0);

    // The window slides in the background: one pass per lane per interval, and only when a
    // counted closure has left it.
    now = NOW + 20 * DAY;
    expect(book.sweep()).toBe(1);
    expect(book.fullPasses).toBe(1);
    expect(book.statsOf(LANE)).toEqual(laneStatsOf(LANE, book.closures(), Math.floor(now / 1000), 90));
    now += 1_000;
    expect(book.sweep()).toBe(0);
    now += DAY;
    expect(book.sweep()).toBe(1);
    expect(book.sweep()).toBe(0);
    expect(book.fullPasses).toBe(2);
  });

  it('a lane whose closures all lie inside the window is never passed over', () => {
    const book = new LaneBook({ clock: () => NOW, ttlMs: 0 });
    for (let i = 0; i < 1_000; i++) book.add(hotClosure(i, Math.floor(NOW / 1000) - 3_600));
    expect(book.sweep()).toBe(0);
    expect(book.fullPasses).toBe(0);
  });
});
