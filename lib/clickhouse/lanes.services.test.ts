import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { median } from '../lanes/index.ts';
import { DAY_MS, HOUR_MS as HOUR } from '../time/index.ts';
import { normalizePoll, type NormalizedShipment } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { makePoll, scan } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { createClickHouseClient } from './client.ts';
import { ClickHouseLaneSource, readLaneBenchmark, refreshLaneBenchmarks } from './lanes.ts';
import { toRows } from './rows.ts';
import { createTestDatabase, rowsOf, startFaultyProxy, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter } from './writer.ts';
import type { KeyMode } from '../schemas/index.ts';

const { rules } = product;
const START = Date.UTC(2026, 9, 1, 4, 30);
const MAIN_LANE = 'delhivery:110:560';
const SMALL_LANE = 'delhivery:400:700';

interface JourneyInput {
  awb: string;
  transitHours: number;
  delivered?: boolean;
  origin?: string;
  destination?: string | null;
  polledAt?: number;
}

/** A Delhivery journey: booked, picked up 2 h later, delivered `transitHours` after pickup (or not yet). */
function journey({ awb, transitHours, delivered = true, origin = '110001', destination = '560001', polledAt }: JourneyInput): CarrierPoll {
  const pickup = START + 2 * HOUR;
  const at = (ms: number) => new Date(ms).toISOString();
  const scans = [
    scan({ occurred_at: at(START), raw_status: 'Manifested', raw_code: 'UD', remarks: 'Consignment Manifested', location: 'Delhi Hub' }),
    scan({ occurred_at: at(pickup), raw_status: 'In Transit', raw_code: 'UD', remarks: 'Shipment picked up', location: 'Delhi Hub' }),
    scan({ occurred_at: at(pickup + (transitHours * HOUR) / 2), raw_status: 'In Transit', raw_code: 'UD', remarks: 'Shipment forwarded', location: 'Nagpur Hub' }),
  ];
  if (delivered) scans.push(scan({ occurred_at: at(pickup + transitHours * HOUR), raw_status: 'Delivered', raw_code: 'DL', location: 'Bengaluru Hub' }));
  return makePoll({
    carrier: 'delhivery',
    awb,
    polled_at: at(polledAt ?? pickup + transitHours * HOUR + 6 * HOUR),
    shipment: {
      origin: { city: 'Somewhere', state: null, pincode: origin },
      destination: destination === null ? null : { city: 'Elsewhere', state: null, pincode: destination },
      service_type: null,
      weight_grams: null,
      booked_at: null,
      estimated_delivery_at: null,
    },
    scans,
  });
}

/** 24 h to about 5 days, uneven, with a few ties. */
const transitHoursOf = (i: number) => 24 + ((i * 37) % 97) + (i % 4) * 0.25;

/** All-time medians per lane, as refreshLaneBenchmarks computes them (the newest poll per shipment). */
class AllTimeBook {
  private readonly lanes = new Map<string, Map<string, number>>();
  add(sample: { lane: string; shipmentKey: string; transitDays: number }): void {
    if (!this.lanes.has(sample.lane)) this.lanes.set(sample.lane, new Map());
    this.lanes.get(sample.lane)!.set(sample.shipmentKey, sample.transitDays);
  }
  async get(lane: string) {
    const values = [...(this.lanes.get(lane)?.values() ?? [])];
    return values.length ? { median_transit_days: median(values), sample_size: values.length } : null;
  }
}

function laneSampleOf(shipment: NormalizedShipment) {
  const { record, facts } = shipment;
  if (!facts.lane || facts.stage !== 'delivered' || facts.first_physical_scan_ms === null || facts.terminal_at_ms === null) return null;
  return { lane: facts.lane, shipmentKey: `${record.carrier}:${record.awb}`, transitDays: (facts.terminal_at_ms - facts.first_physical_scan_ms) / DAY_MS };
}

describe('lane benchmarks (real ClickHouse)', () => {
  let db: TestDatabase;
  let writer: ClickHouseWriter;
  const book = new AllTimeBook();
  const written: CarrierPoll[] = [];

  async function store(polls: CarrierPoll[], mode: KeyMode = 'live'): Promise<void> {
    for (const poll of polls) {
      const result = normalizePoll(poll, rules);
      writer.write(toRows(poll, result, rules.mappingVersion, mode));
      if (result.kind === 'found' && mode === 'live') {
        const sample = laneSampleOf(result.shipment);
        // The embedded book keeps the newest poll's state per shipment, as ClickHouse's argMax does.
        const newer = written.filter((p) => p.awb === poll.awb && Date.parse(p.polled_at) > Date.parse(poll.polled_at));
        if (sample && newer.length === 0) book.add(sample);
      }
      written.push(poll);
    }
    await writer.flush();
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    writer = new ClickHouseWriter(db.client);
    const polls: CarrierPoll[] = [];
    for (let i = 0; i < 34; i++) polls.push(journey({ awb: `LANE${String(i).padStart(6, '0')}`, transitHours: transitHoursOf(i) }));
    // Not delivered yet: no transit days, not in the sample.
    for (let i = 0; i < 3; i++) polls.push(journey({ awb: `OPEN${i}`, transitHours: 30, delivered: false }));
    // Polled twice: in transit, then delivered. Counts once, with its delivered transit.
    polls.push(journey({ awb: 'TWICE1', transitHours: 40, delivered: false, polledAt: START + 10 * HOUR }));
    polls.push(journey({ awb: 'TWICE1', transitHours: 40 }));
    // The newer (delivered) poll arrives first, the older one late: the newer state still wins.
    polls.push(journey({ awb: 'LATE1', transitHours: 100 }));
    polls.push(journey({ awb: 'LATE1', transitHours: 100, delivered: false, polledAt: START + 10 * HOUR }));
    // Another lane, under 30 samples; and a shipment without a destination pincode (no lane).
    for (const [i, hours] of [50, 20, 35].entries()) polls.push(journey({ awb: `SMALL${i}`, transitHours: hours, origin: '400099', destination: '700001' }));
    polls.push(journey({ awb: 'NOLANE1', transitHours: 10, destination: null }));
    await store(polls);
    // Sandbox (test-mode) deliveries on the same lane, one with a live twin's AWB: a lane of their
    // own (`test:` + lane), never mixed into the live benchmark.
    await store([journey({ awb: 'SANDBOX1', transitHours: 1 }), journey({ awb: 'SANDBOX2', transitHours: 2 }), journey({ awb: 'LANE000000', transitHours: 3 })], 'test');
  });
  afterAll(async () => {
    await writer?.close();
    await db?.drop();
  });

  it('computes the exact median and sample size per lane from the latest state of delivered shipments', async () => {
    const result = await refreshLaneBenchmarks(db.client, { nowMs: Date.UTC(2026, 10, 21, 9, 0) });
    expect(result.lanes).toBe(3);

    const expected = await book.get(MAIN_LANE);
    expect(expected?.sample_size).toBe(36);
    // The same median by hand, from the transit days the test chose.
    const byHand = median([...Array.from({ length: 34 }, (_, i) => transitHoursOf(i)), 40, 100].map((h) => h / 24));
    expect(expected?.median_transit_days).toBeCloseTo(byHand, 12);

    const all = await rowsOf<Record<string, unknown>>(db.client, 'SELECT * FROM lane_benchmarks ORDER BY lane');
    const sandbox = all.filter((r) => String(r.lane).startsWith('test:'));
    expect(sandbox).toEqual([expect.objectContaining({ lane: `test:${MAIN_LANE}`, carrier: 'delhivery', origin_prefix: '110', destination_prefix: '560', sample_size: 3 })]);
    expect(sandbox[0]!.median_transit_days as number).toBeCloseTo(2 / 24, 12);
    const rows = all.filter((r) => !String(r.lane).startsWith('test:'));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      lane: MAIN_LANE,
      carrier: 'delhivery',
      origin_prefix: '110',
      destination_prefix: '560',
      sample_size: 36,
      updated_at: '2026-11-21 09:00:00',
    });
    expect(rows[0]!.median_transit_days as number).toBeCloseTo(byHand, 12);
    expect(rows[1]).toMatchObject({ lane: SMALL_LANE, origin_prefix: '400', destination_prefix: '700', sample_size: 3 });
    expect(rows[1]!.median_transit_days as number).toBeCloseTo(35 / 24, 12);
    expect(await readLaneBenchmark(db.client, 'delhivery:999:999')).toBeNull();
  });

  it('an odd-sized lane takes the middle value; a new refresh supersedes the old rows', async () => {
    // A 37th delivery on the main lane makes the count odd.
    await store([journey({ awb: 'LANE_ODD', transitHours: 200 })]);
    await refreshLaneBenchmarks(db.client, { nowMs: Date.UTC(2026, 10, 21, 10, 0) });
    const expected = await book.get(MAIN_LANE);
    expect(expected?.sample_size).toBe(37);
    const stats = await readLaneBenchmark(db.client, MAIN_LANE);
    expect(stats?.sample_size).toBe(37);
    expect(stats?.median_transit_days).toBeCloseTo(expected!.median_transit_days, 12);
    expect(await readLaneBenchmark(db.client, SMALL_LANE)).toEqual({ median_transit_days: 35 / 24, sample_size: 3 });
  });

  describe('ClickHouseLaneSource', () => {
    it('serves a lane from memory for the TTL, then reads it again', async () => {
      let now = 1_000_000;
      const source = new ClickHouseLaneSource(db.client, { ttlMs: 60_000, now: () => now });
      const before = await readLaneBenchmark(db.client, MAIN_LANE);
      expect(await source.get(MAIN_LANE)).toEqual(before);
      expect(await source.get(MAIN_LANE)).toEqual(before);
      expect(source.reads).toBe(1);

      // Concurrent lookups of a lane with no benchmark share one query and get null.
      const [a, b] = await Promise.all([source.get('delhivery:123:456'), source.get('delhivery:123:456')]);
      expect([a, b]).toEqual([null, null]);
      expect(source.reads).toBe(2);

      await store([journey({ awb: 'LANE_NEW', transitHours: 300 })]);
      await refreshLaneBenchmarks(db.client, { nowMs: Date.UTC(2026, 10, 21, 11, 0) });
      now += 59_999;
      expect(await source.get(MAIN_LANE)).toEqual(before);
      expect(source.reads).toBe(2);
      now += 2;
      const after = await source.get(MAIN_LANE);
      expect(after?.sample_size).toBe(before!.sample_size + 1);
      expect(source.reads).toBe(3);
    });

    it('serves the last known value (or null) when ClickHouse is unreachable', async () => {
      const proxy = await startFaultyProxy();
      const client = createClickHouseClient({ url: proxy.url, database: db.target.database });
      try {
        let now = 0;
        const warnings: string[] = [];
        const source = new ClickHouseLaneSource(client, { ttlMs: 1_000, errorTtlMs: 500, now: () => now, logger: { warn: (_o, msg) => warnings.push(msg) } });
        const known = await source.get(SMALL_LANE);
        expect(known?.sample_size).toBe(3);
        proxy.down();
        now += 1_001;
        expect(await source.get(SMALL_LANE)).toEqual(known);
        expect(await source.get(MAIN_LANE)).toBeNull();
        expect(warnings.length).toBe(2);
        // Within errorTtlMs the failure is not retried.
        const reads = source.reads;
        expect(await source.get(SMALL_LANE)).toEqual(known);
        expect(source.reads).toBe(reads);
        proxy.up();
        now += 501;
        expect(await source.get(MAIN_LANE)).not.toBeNull();
      } finally {
        await client.close();
        await proxy.close();
      }
    });
  });
});
