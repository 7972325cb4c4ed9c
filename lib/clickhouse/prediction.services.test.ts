/**
 * The delivery model's ClickHouse path against the embedded one, on the same polls: observations
 * written by the normalizer's sink, the model rebuilt with SQL aggregates, read back into memory,
 * must predict what lib/prediction's in-process build predicts (same levels, sample sizes, days).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { normalizePoll } from '../normalize/index.ts';
import { processPollMessage } from '../pipeline/process-poll.ts';
import { loadPlaces } from '../places/index.ts';
import {
  buildModel, deliveredShipmentOf, NO_PLACES, placeLookupOf, queryOf, WorkdayIndex, type DeliveredShipment, type Prediction, type PredictionQuery,
} from '../prediction/index.ts';
import { otherNetworkPolls } from '../prediction/testutil/other-network.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { product } from '../testutil/product.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { DAY_MS, HOUR_MS } from '../time/index.ts';
import { ClickHousePredictionSource, observationRows, PredictionObservationSink, rebuildPredictionModel } from './prediction.ts';
import type { PollRows } from './rows.ts';
import { ClickHouseWriter } from './writer.ts';
import { countOf, createTestDatabase, type TestDatabase } from './testutil/database.ts';

const calendar = loadCalendar();
const workdays = new WorkdayIndex(calendar);
const places = placeLookupOf(loadPlaces());
const START = Date.parse('2026-03-01T00:00:00+05:30');
const SPLIT = START + 50 * DAY_MS;

describe('delivery model in ClickHouse (prediction_observations → prediction_cells, prediction_thresholds)', () => {
  let db: TestDatabase;
  const polls: CarrierPoll[] = [...otherNetworkPolls({ shipments: 3000, days: 60, seed: 23, calendar, startMs: START })];
  const before = polls.filter((p) => Date.parse(p.polled_at) < SPLIT);

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => { await db?.drop(); });

  it('writes each delivered shipment’s observations once, rebuilds in SQL, and predicts as the embedded model does', async () => {
    const writer = new ClickHouseWriter(db.client, { maxBatchRows: 20_000 });
    const sink = new PredictionObservationSink(writer, db.client, places, workdays);
    // Batches as the normalizer hands them over; every poll of a delivered shipment after its
    // delivery repeats it, which must not add rows.
    for (let i = 0; i < before.length; i += 2_000) {
      const rows: PollRows[] = [];
      for (const poll of before.slice(i, i + 2_000)) {
        const outcome = processPollMessage(JSON.stringify(poll), product.rules, (name) => product.registry.resolve(name));
        if (outcome.kind === 'rows') rows.push(outcome.rows);
      }
      sink.write(rows);
      await sink.flush();
    }
    await writer.close();

    // The embedded model over the same polls: the newest reading of each shipment before the split.
    const newest = new Map<string, { ms: number; d: DeliveredShipment | null }>();
    for (const poll of before) {
      const ms = Date.parse(poll.polled_at);
      const key = `${poll.carrier}:${poll.awb}`;
      if ((newest.get(key)?.ms ?? -1) >= ms) continue;
      const r = normalizePoll(poll, product.rules);
      if (r.kind === 'found') newest.set(key, { ms, d: deliveredShipmentOf(r.shipment.record, r.shipment.facts, 'live', places) });
    }
    const delivered = [...newest.values()].flatMap((v) => (v.d ? [v.d] : []));
    expect(delivered.length).toBeGreaterThan(1500);
    const distinct = await countOf(db.client, 'SELECT uniqExact(carrier, awb) AS c FROM prediction_observations');
    expect(distinct).toBe(delivered.length);
    const duplicates = await countOf(db.client, 'SELECT count() AS c FROM (SELECT carrier, awb, episode, bucket, count() AS n FROM prediction_observations GROUP BY carrier, awb, episode, bucket HAVING n > 1)');
    expect(duplicates).toBe(0);

    const embedded = buildModel(delivered, { modelAtMs: SPLIT, windowDays: 90, places, workdays });
    const rebuilt = await rebuildPredictionModel(db.client, { nowMs: SPLIT, windowDays: 90 });
    expect(rebuilt.cells).toBe(embedded.summary.cells);
    const source = new ClickHousePredictionSource(db.client, { places, workdays });
    await source.refresh();
    const fromClickHouse = source.model()!;
    expect(fromClickHouse.summary.thresholds).toEqual(embedded.summary.thresholds);
    // The same choice of detail or plain cells per stage and position (model.ts chooseDetail).
    expect(fromClickHouse.summary.detail).toEqual(embedded.summary.detail);
    expect(fromClickHouse.summary.cells).toBe(embedded.summary.cells);
    // Calibration moved the thresholds off the nominal levels (else the comparison proves less).
    expect(Object.values(embedded.summary.thresholds).flat(2).some((t) => t !== 0.8 && t !== 0.9)).toBe(true);

    let compared = 0;
    const levels = new Set<string>();
    const positions = new Set<string | null>();
    for (const poll of polls.filter((p) => Date.parse(p.polled_at) >= SPLIT)) {
      const r = normalizePoll(poll, product.rules);
      if (r.kind !== 'found') continue;
      const q = queryOf(r.shipment.record, r.shipment.facts, 'live', Date.parse(poll.polled_at), places);
      if (q === null) continue;
      const a: Prediction | null = embedded.predict(q);
      const b = fromClickHouse.predict(q);
      expect(b, `${poll.carrier} ${poll.awb} as of ${poll.polled_at}`).toEqual(a);
      if (a) { compared++; levels.add(a.basis.level); positions.add(a.basis.position); }
    }
    expect(compared).toBeGreaterThan(1000);
    expect(levels.size).toBeGreaterThanOrEqual(2);
    // Where the parcel is took part: detail cells of several positions, and plain ones (null).
    expect(positions).toContain('destination_city');
    expect(positions).toContain(null);
    expect(positions.size).toBeGreaterThanOrEqual(4);

    // The reader swaps only for a newer version; old versions' partitions are dropped.
    for (let i = 1; i <= 4; i++) await rebuildPredictionModel(db.client, { nowMs: SPLIT + i * 60_000, windowDays: 90 });
    await source.refresh();
    expect(source.model()!.modelAtMs).toBe(SPLIT + 4 * 60_000);
    expect(await countOf(db.client, 'SELECT uniqExact(version) AS c FROM prediction_cells')).toBe(3);
  }, 240_000);

  it('chooses detail or plain cells per stage and position as the embedded build does, and reads the plain ones where it chose them', async () => {
    const own = await createTestDatabase();
    try {
      // Half the parcels take 60 h in transit, half 100 h, and their one scan's place tells which, but
      // the other way round from the calibration window on (as after a carrier renamed its hubs): the
      // detail cells learned before it mislead there, and the stage's plain ones do not.
      const modelAt = Date.parse('2026-06-30T12:00:00+05:30');
      const r = seededRandom(5);
      const data: DeliveredShipment[] = Array.from({ length: 1200 }, (_, i) => {
        // Whole seconds, as ClickHouse keeps them.
        const pickup = Math.round((modelAt - 60 * DAY_MS + r() * 50 * DAY_MS) / 1000) * 1000;
        const fast = i % 2 === 0;
        const ofd = pickup + Math.round((fast ? 60 : 100) * 3600 + r() * 4 * 3600) * 1000;
        const renamed = pickup >= modelAt - 24 * DAY_MS;
        return {
          mode: 'live', carrier: 'delhivery', serviceType: 'surface', originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
          deliveredMs: ofd + 3 * 3600_000, seed: 500_000 + i, scanMs: [pickup], scanPositions: [fast === renamed ? 1 : 2],
          episodes: [
            { stage: 'awaiting_pickup', enteredMs: pickup - 20 * 3600_000, leftMs: pickup },
            { stage: 'in_transit', enteredMs: pickup, leftMs: ofd },
            { stage: 'out_for_delivery', enteredMs: ofd, leftMs: ofd + 3 * 3600_000 },
          ],
        };
      });
      await own.client.insert({
        table: 'prediction_observations', format: 'JSONEachRow', values: data.flatMap((d, i) => observationRows(d, `SYN${i}`, NO_PLACES, workdays)),
      });
      const embedded = buildModel(data, { modelAtMs: modelAt, windowDays: 90, places: NO_PLACES, workdays });
      const rebuilt = await rebuildPredictionModel(own.client, { nowMs: modelAt, windowDays: 90 });
      const source = new ClickHousePredictionSource(own.client, { places: NO_PLACES, workdays });
      await source.refresh();
      const fromClickHouse = source.model()!;
      expect(embedded.summary.detail['in_transit']).toEqual([]);
      expect(embedded.summary.detail['out_for_delivery']).not.toEqual([]);
      expect(fromClickHouse.summary.detail).toEqual(embedded.summary.detail);
      expect(fromClickHouse.summary.thresholds).toEqual(embedded.summary.thresholds);
      expect(rebuilt.cells).toBe(embedded.summary.cells);
      let compared = 0;
      for (let h = 0; h < 72; h += 5) {
        for (const position of ['origin', 'en_route'] as const) {
          const asOf = Date.parse('2026-06-29T06:00:00+05:30') + h * HOUR_MS;
          const q: PredictionQuery = {
            mode: 'live', carrier: 'delhivery', serviceType: 'surface', originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
            stage: 'in_transit', stageEnteredMs: asOf - h * HOUR_MS, asOfMs: asOf, eddMs: null, position,
          };
          expect(fromClickHouse.predict(q), `${position} as of ${h} h`).toEqual(embedded.predict(q));
          // The plain cell: no position named.
          if (embedded.predict(q)) { compared++; expect(embedded.predict(q)!.basis.position).toBeNull(); }
        }
      }
      expect(compared).toBeGreaterThan(20);
    } finally {
      await own.drop();
    }
  }, 120_000);
});
