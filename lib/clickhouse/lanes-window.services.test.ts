import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LaneBook, type WindowedLaneStats } from '../lanes/index.ts';
import { NDR_REMARKS, journeyPoll, type JourneySpec } from '../lanes/testutil/journeys.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { normalizePollTimed } from '../normalize/index.ts';
import { ShipmentIndex } from '../pipeline/shipment-index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { product } from '../testutil/product.ts';
import { LaneClosureSink, closureOfRows } from './lanes-closures.ts';
import { readLaneStats, refreshLaneStats } from './lanes-window.ts';
import { toRows, type PollRows } from './rows.ts';
import { createTestDatabase, rowsOf, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter } from './writer.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS as DAY } from '../time/index.ts';

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);
const { rules } = product;

/** The rows the normalizer would write for a poll. */
function rowsOfPoll(poll: CarrierPoll, mode: KeyMode): PollRows {
  const { result, times } = normalizePollTimed(poll, rules);
  return toRows(poll, result, rules.mappingVersion, mode, times);
}

/** Independent figures: plain sorting and the textbook formulas, from the specs themselves. */
function expected(specs: readonly JourneySpec[], nowMs: number, days: number) {
  const inWindow = specs.filter((s) => s.closedAtMs >= nowMs - days * DAY);
  const delivered = inWindow.filter((s) => s.outcome === 'delivered');
  const rto = inWindow.filter((s) => s.outcome === 'rto');
  const t = delivered.map((s) => s.transitHours / 24).sort((a, b) => a - b);
  const n = t.length;
  const median = n === 0 ? null : n % 2 ? t[(n - 1) / 2]! : (t[n / 2 - 1]! + t[n / 2]!) / 2;
  const rank = 0.9 * (n - 1);
  const p90 = n === 0 ? null : t[Math.floor(rank)]! + (rank - Math.floor(rank)) * ((t[Math.ceil(rank)] ?? 0) - t[Math.floor(rank)]!);
  const withEdd = delivered.filter((s) => s.eddMs !== null);
  const failed = inWindow.flatMap((s) => s.failedRemarks);
  return {
    closed: inWindow.length, sample_size: n, p50: median, p90,
    on_time: withEdd.length ? withEdd.filter((s) => s.closedAtMs <= s.eddMs!).length / withEdd.length : null,
    first_attempt: n ? delivered.filter((s) => s.failedRemarks.length === 0).length / n : null,
    rto: n + rto.length ? rto.length / (n + rto.length) : null,
    failed: failed.length,
  };
}

const REASON_OF: Record<string, string> = {
  'Consignee Unavailable': 'customer_unavailable', 'ADDRESS NOT FOUND': 'address_issue', 'CONSIGNEE REFUSED TO ACCEPT': 'refused',
  'Door Locked': 'premises_closed', 'Payment not ready with customer': 'cod_not_ready', 'Not attempted, vehicle breakdown': 'other',
};

/** Lanes of the fixture: a big one, a small one, one with only cancellations, one sandbox lane. */
function fixture(): { specs: JourneySpec[]; modeOf: Map<string, KeyMode> } {
  const random = seededRandom(11);
  const specs: JourneySpec[] = [];
  const modeOf = new Map<string, KeyMode>();
  const add = (origin: string, destination: string, count: number, mode: KeyMode, only?: JourneySpec['outcome']) => {
    for (let i = 0; i < count; i++) {
      const roll = random();
      const outcome = only ?? (roll < 0.75 ? 'delivered' : roll < 0.9 ? 'rto' : 'cancelled');
      const closedAtMs = NOW - Math.floor(random() * 80 * DAY / 1000) * 1000 - DAY;
      const transitHours = 20 + Math.floor(random() * 120) + (i % 3) * 0.5;
      const failedRemarks = outcome === 'cancelled' ? [] : Array.from({ length: Math.floor(random() * 3) }, () => NDR_REMARKS[Math.floor(random() * NDR_REMARKS.length)]!);
      const eddMs = random() < 0.2 ? null : closedAtMs + Math.round((random() - 0.6) * 3 * DAY / 1000) * 1000;
      const awb = `${origin}${destination}${mode === 'test' ? 'T' : 'L'}${String(i).padStart(5, '0')}`;
      specs.push({ awb, origin, destination, outcome, closedAtMs, transitHours, failedRemarks, eddMs });
      modeOf.set(awb, mode);
    }
  };
  add('110001', '560001', 140, 'live');
  add('400001', '700001', 12, 'live');
  add('600001', '110002', 5, 'live', 'cancelled');
  add('110001', '560002', 40, 'test');
  // Window edges: closed exactly 90 days before NOW (inside) and 91 days before (outside).
  specs.push({ awb: 'EDGE90', origin: '110001', destination: '560001', outcome: 'delivered', closedAtMs: NOW - 90 * DAY, transitHours: 1000, failedRemarks: ['Door Locked'], eddMs: null });
  specs.push({ awb: 'EDGE91', origin: '110001', destination: '560001', outcome: 'delivered', closedAtMs: NOW - 91 * DAY, transitHours: 2000, failedRemarks: ['Door Locked'], eddMs: null });
  modeOf.set('EDGE90', 'live');
  modeOf.set('EDGE91', 'live');
  return { specs, modeOf };
}

const BIG = 'delhivery:110:560';
const SMALL = 'delhivery:400:700';
const CANCELLED_ONLY = 'delhivery:600:110';
const SANDBOX = 'test:delhivery:110:560';

describe('windowed lane statistics (real ClickHouse)', () => {
  let db: TestDatabase;
  let writer: ClickHouseWriter;
  let sink: LaneClosureSink;
  const { specs, modeOf } = fixture();
  const polls = specs.map((spec) => ({ poll: journeyPoll(spec), mode: modeOf.get(spec.awb)! }));
  const book = new LaneBook({ clock: () => NOW, ttlMs: 0 });
  const index = new ShipmentIndex(rules, { shipments: book.shipments, lanes: book });

  beforeAll(async () => {
    db = await createTestDatabase();
    writer = new ClickHouseWriter(db.client);
    sink = new LaneClosureSink(writer, db.client);
    sink.write(polls.map(({ poll, mode }) => rowsOfPoll(poll, mode)));
    await sink.flush();
    for (const { poll, mode } of polls) index.handle(poll, mode);
  }, 60_000);
  afterAll(async () => {
    await writer?.close();
    await db?.drop();
  });

  const stats = async (lanes: string[]) => Object.fromEntries((await readLaneStats(db.client, lanes, 90)).map((s) => [s.lane, s])) as Record<string, WindowedLaneStats>;

  it('derives the same closure from the stored rows as from the normalized record', () => {
    for (const { poll, mode } of polls) {
      const fromRows = closureOfRows(rowsOfPoll(poll, mode));
      const fromBook = book.closures().find((c) => c.awb === poll.awb && c.mode === mode) ?? null;
      expect(fromRows).toEqual(fromBook);
      expect(fromRows).not.toBeNull();
    }
  });

  it('computes exact p50/p90, rates and NDR shares over the window, equal to the embedded book and to independent figures', async () => {
    const refresh = await refreshLaneStats(db.client, { nowMs: NOW, windowDays: 90 });
    expect(refresh).toMatchObject({ full: true, lanes: 4 });
    const got = await stats([BIG, SMALL, CANCELLED_ONLY, SANDBOX]);
    for (const [lane, origin, destination, mode] of [[BIG, '110001', '560001', 'live'], [SMALL, '400001', '700001', 'live'], [CANCELLED_ONLY, '600001', '110002', 'live'], [SANDBOX, '110001', '560002', 'test']] as const) {
      const mine = specs.filter((s) => s.origin.slice(0, 3) === origin.slice(0, 3) && s.destination.slice(0, 3) === destination.slice(0, 3) && modeOf.get(s.awb) === mode);
      const want = expected(mine, NOW, 90);
      const row = got[lane]!;
      expect(row, lane).toBeDefined();
      expect(row).toMatchObject({ closed: want.closed, sample_size: want.sample_size, failed_attempts: want.failed, mode });
      for (const [value, target] of [[row.p50_transit_days, want.p50], [row.p90_transit_days, want.p90], [row.on_time_rate, want.on_time], [row.first_attempt_rate, want.first_attempt], [row.rto_rate, want.rto]] as const) {
        if (target === null) expect(value).toBeNull();
        else expect(value).toBeCloseTo(target, 12);
      }
      // NDR mix: counted here from the remarks.
      const failed = mine.filter((s) => s.closedAtMs >= NOW - 90 * DAY).flatMap((s) => s.failedRemarks.map((r) => REASON_OF[r]!));
      const counts = new Map<string, number>();
      for (const r of failed) counts.set(r, (counts.get(r) ?? 0) + 1);
      expect(Object.fromEntries(row.ndr_reasons.map((r) => [r.reason, r.share]))).toEqual(Object.fromEntries([...counts].map(([r, c]) => [r, c / failed.length])));
      // The embedded default: bit-identical.
      expect(book.statsOf(lane)).toEqual(row);
    }
    // Window edge: EDGE90 (1000 h transit) is in the big lane's sample, EDGE91 (2000 h) is not.
    expect(got[BIG]!.sample_size).toBe(specs.filter((s) => s.origin === '110001' && s.destination === '560001' && s.outcome === 'delivered' && s.awb !== 'EDGE91').length);
    const big = specs.filter((s) => s.destination === '560001' && s.outcome === 'delivered' && s.awb !== 'EDGE91').map((s) => s.transitHours / 24);
    expect(Math.max(...big)).toBe(1000 / 24);
    // Zero denominators are null, never NaN: the cancelled-only lane.
    expect(got[CANCELLED_ONLY]).toMatchObject({ closed: 5, sample_size: 0, p50_transit_days: null, p90_transit_days: null, on_time_rate: null, first_attempt_rate: null, rto_rate: null, ndr_reasons: [] });
    // The lookup's benchmark comes from the window too.
    const [bench] = await rowsOf<{ median_transit_days: number; sample_size: number }>(db.client, `SELECT median_transit_days, sample_size FROM lane_benchmarks WHERE lane = '${BIG}'`);
    expect(Number(bench!.median_transit_days)).toBe(got[BIG]!.p50_transit_days);
    expect(await book.get(BIG)).toEqual({ median_transit_days: got[BIG]!.p50_transit_days, sample_size: got[BIG]!.sample_size });
  });

  it('re-delivered polls change nothing: no new closure rows, the same figures', async () => {
    const before = await stats([BIG, SMALL, SANDBOX]);
    const closures = await rowsOf<{ n: string }>(db.client, 'SELECT count() AS n FROM lane_closures');
    sink.write(polls.map(({ poll, mode }) => rowsOfPoll(poll, mode)));
    await sink.flush();
    for (const { poll, mode } of polls) index.handle(poll, mode);
    expect(await rowsOf<{ n: string }>(db.client, 'SELECT count() AS n FROM lane_closures')).toEqual(closures);
    await refreshLaneStats(db.client, { nowMs: NOW, windowDays: 90, full: true });
    expect(await stats([BIG, SMALL, SANDBOX])).toEqual(before);
  });

  it('a refresh recomputes only the lanes touched since the last one; others keep their rows', async () => {
    const versions = async () => Object.fromEntries((await rowsOf<{ lane: string; v: string }>(db.client, 'SELECT lane, toString(max(version)) AS v FROM lane_stats GROUP BY lane')).map((r) => [r.lane, r.v]));
    // Touches are stamped with the wall clock in whole seconds: one refresh a second after the
    // fixture's inserts, so that what it wrote counts as seen.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await refreshLaneStats(db.client, { nowMs: NOW, windowDays: 90, full: true });
    const before = await versions();
    const spec: JourneySpec = { awb: 'NEWSMALL1', origin: '400001', destination: '700001', outcome: 'delivered', closedAtMs: NOW - DAY, transitHours: 30, failedRemarks: [], eddMs: NOW };
    sink.write(rowsOfPoll(journeyPoll(spec), 'live'));
    await sink.flush();
    index.handle(journeyPoll(spec), 'live');
    const refresh = await refreshLaneStats(db.client, { nowMs: NOW, windowDays: 90, marginS: 0 });
    expect(refresh).toMatchObject({ full: false, lanes: 1 });
    const after = await versions();
    expect(after[SMALL]).not.toBe(before[SMALL]);
    for (const lane of [BIG, CANCELLED_ONLY, SANDBOX]) expect(after[lane]).toBe(before[lane]);
    const got = await stats([SMALL]);
    expect(got[SMALL]!.closed).toBe(13);
    expect(book.statsOf(SMALL)).toEqual({ ...got[SMALL] });
  });

  it('the window slides: closures that leave it are recomputed away, down to a row of nulls', async () => {
    // 85 days on, only closures of the last 5 days of the fixture remain; the cancelled lane's go.
    const later = NOW + 85 * DAY;
    const refresh = await refreshLaneStats(db.client, { nowMs: later, windowDays: 90 });
    expect(refresh.full).toBe(false);
    const got = await stats([BIG, SMALL, CANCELLED_ONLY, SANDBOX]);
    const laterBook = new LaneBook({ clock: () => later, ttlMs: 0 });
    for (const c of book.closures()) laterBook.add(c);
    for (const lane of [BIG, SMALL, CANCELLED_ONLY, SANDBOX]) expect(laterBook.statsOf(lane)).toEqual(got[lane]);
    const cancelledLeft = specs.filter((s) => s.origin === '600001' && s.closedAtMs >= later - 90 * DAY).length;
    expect(got[CANCELLED_ONLY]!.closed).toBe(cancelledLeft);
  });
});

