import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyMode } from '../schemas/index.ts';
import { laneParts } from '../lanes/index.ts';
import { MINUTE_MS as MINUTE } from '../time/index.ts';
import { createClickHouseClient } from './client.ts';
import { toClickHouseDateTime } from './datetime.ts';
import { ClickHouseLaneWindowSource } from './lanes-snapshot.ts';
import { createTestDatabase, type TestDatabase } from './testutil/database.ts';

const CARRIERS = ['delhivery', 'dtdc', 'ekart'];
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

/** A lane_stats row as a refresh writes it: `closed` shipments, p50 = `p50`, at `version`. */
function statsRow(lane: string, closed: number, p50: number | null, version: number, windowDays = 90): Record<string, unknown> {
  return {
    lane, ...laneParts(lane), window_days: windowDays, window_end: toClickHouseDateTime(version),
    closed, sample_size: closed, p50_transit_days: p50, p90_transit_days: p50, on_time_rate: null,
    first_attempt_rate: null, rto_rate: null, failed_attempts: 0, 'ndr_reasons.reason': [], 'ndr_reasons.share': [],
    updated_at: toClickHouseDateTime(Math.floor(version / 1000) * 1000), version,
  };
}

describe('ClickHouseLaneWindowSource: the lanes API reads lane_stats from an in-memory snapshot', () => {
  let db: TestDatabase;
  const write = (rows: Record<string, unknown>[]) => db.client.insert({ table: 'lane_stats', format: 'JSONEachRow', values: rows });
  const p50s = async (source: ClickHouseLaneWindowSource, mode: KeyMode = 'live') =>
    Object.fromEntries((await source.lanesBetween('110', '560', mode)).map((s) => [s.lane, s.p50_transit_days]));

  beforeAll(async () => {
    db = await createTestDatabase();
    await write([
      statsRow('delhivery:110:560', 40, 3, T0),
      statsRow('dtdc:110:560', 35, 4, T0),
      statsRow('ekart:110:560', 0, null, T0), // a lane whose window emptied
      statsRow('test:delhivery:110:560', 31, 2, T0), // sandbox lanes apart
      statsRow('delhivery:110:400', 50, 5, T0),
      statsRow('delhivery:110:560', 99, 9, T0, 30), // another window length
    ]);
  });
  afterAll(async () => { await db?.drop(); });

  it('answers a pair with its lanes of the window and mode, leaving out emptied lanes', async () => {
    const source = new ClickHouseLaneWindowSource(db.client, { carriers: CARRIERS });
    expect(await p50s(source)).toEqual({ 'delhivery:110:560': 3, 'dtdc:110:560': 4 });
    expect(await p50s(source, 'test')).toEqual({ 'test:delhivery:110:560': 2 });
    expect(source.reads).toBe(1);
  });

  it('serves the snapshot until ttlMs, then catches up on the rows newer refreshes wrote', async () => {
    let now = T0;
    const source = new ClickHouseLaneWindowSource(db.client, { carriers: CARRIERS, ttlMs: MINUTE, now: () => now });
    expect(await p50s(source)).toEqual({ 'delhivery:110:560': 3, 'dtdc:110:560': 4 });
    await write([statsRow('dtdc:110:560', 36, 4.5, T0 + MINUTE), statsRow('ekart:110:560', 30, 6, T0 + MINUTE)]);
    now += MINUTE - 1;
    expect(await p50s(source)).toEqual({ 'delhivery:110:560': 3, 'dtdc:110:560': 4 });
    expect(source.reads).toBe(1);
    now += 1;
    await source.lanesBetween('110', '560', 'live'); // starts the catch-up, answered from the snapshot
    await source.catchUp();
    expect(source.reads).toBe(2);
    expect(await p50s(source)).toEqual({ 'delhivery:110:560': 3, 'dtdc:110:560': 4.5, 'ekart:110:560': 6 });
  });

  it('takes a refresh that started earlier but finished later, and never brings back an emptied lane', async () => {
    const source = new ClickHouseLaneWindowSource(db.client, { carriers: CARRIERS, ttlMs: 0 });
    await write([statsRow('delhivery:110:560', 0, null, T0 + 3 * MINUTE)]);
    expect(await p50s(source)).toEqual({ 'dtdc:110:560': 4.5, 'ekart:110:560': 6 });
    // Two normalizers: the refresh that started at +2 min writes after the one of +3 min.
    await write([statsRow('delhivery:110:560', 41, 3.1, T0 + 2 * MINUTE), statsRow('dtdc:110:560', 37, 4.7, T0 + 2 * MINUTE)]);
    expect(await p50s(source)).toEqual({ 'dtdc:110:560': 4.7, 'ekart:110:560': 6 });
  });

  it('fails the read when ClickHouse cannot be reached and the snapshot is too old', async () => {
    const down = createClickHouseClient({ url: 'http://127.0.0.1:1', database: db.target.database });
    const source = new ClickHouseLaneWindowSource(down, { carriers: CARRIERS, ttlMs: 0, timeoutMs: 1_000 });
    await expect(source.lanesBetween('110', '560', 'live')).rejects.toThrow();
    await down.close();
  });
});
