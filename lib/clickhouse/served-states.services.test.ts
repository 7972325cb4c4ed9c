/**
 * Who serves where in distributed mode (lib/prediction/served.ts): the states read from
 * ClickHouse's observations are those the embedded book reads from the same deliveries, and the
 * API's estimator over ClickHouse leaves out the same carriers as the embedded one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { normalizePoll } from '../normalize/index.ts';
import { processPollMessage } from '../pipeline/process-poll.ts';
import { loadPlaces } from '../places/index.ts';
import {
  buildModel, deliveredShipmentOf, estimateOf, levelKeys, placeLookupOf, ServedStates, WorkdayIndex, type DeliveredShipment,
} from '../prediction/index.ts';
import { otherNetworkPolls } from '../prediction/testutil/other-network.ts';
import { product } from '../testutil/product.ts';
import { DAY_MS } from '../time/index.ts';
import { istDayOf } from '../time/ist-day.ts';
import { ClickHousePredictionSource, PredictionObservationSink, rebuildPredictionModel } from './prediction.ts';
import type { PollRows } from './rows.ts';
import { readServedStates } from './served-states.ts';
import { createTestDatabase, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter } from './writer.ts';

const calendar = loadCalendar();
const workdays = new WorkdayIndex(calendar);
const places = placeLookupOf(loadPlaces());
const START = Date.parse('2026-03-01T00:00:00+05:30');
const SPLIT = START + 50 * DAY_MS;

describe('served states in ClickHouse', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db?.drop(); });

  it('reads the states each carrier delivered into as the embedded book does; estimates leave out the same carriers', async () => {
    const polls = [...otherNetworkPolls({ shipments: 1500, days: 60, seed: 31, calendar, startMs: START })].filter((p) => Date.parse(p.polled_at) < SPLIT);
    const writer = new ClickHouseWriter(db.client, { maxBatchRows: 20_000 });
    const sink = new PredictionObservationSink(writer, db.client, places, workdays);
    const rows: PollRows[] = [];
    for (const poll of polls) {
      const outcome = processPollMessage(JSON.stringify(poll), product.rules, (name) => product.registry.resolve(name));
      if (outcome.kind === 'rows') rows.push(outcome.rows);
    }
    sink.write(rows);
    await sink.flush();
    await writer.close();
    expect(await readServedStates(db.client, 1)).toBe(ServedStates.NONE);

    const newest = new Map<string, { ms: number; d: DeliveredShipment | null }>();
    for (const poll of polls) {
      const ms = Date.parse(poll.polled_at);
      const key = `${poll.carrier}:${poll.awb}`;
      if ((newest.get(key)?.ms ?? -1) >= ms) continue;
      const r = normalizePoll(poll, product.rules);
      if (r.kind === 'found') newest.set(key, { ms, d: deliveredShipmentOf(r.shipment.record, r.shipment.facts, 'live', places) });
    }
    const delivered = [...newest.values()].flatMap((v) => (v.d ? [v.d] : []));
    const embeddedServed = ServedStates.fromStateKeys(delivered.map((d) => levelKeys(d.mode, d.carrier, d.serviceType, d.originPincode, d.destinationPincode, places)[1]));
    const embedded = buildModel(delivered, { modelAtMs: SPLIT, windowDays: 90, places, workdays });

    await rebuildPredictionModel(db.client, { nowMs: SPLIT, windowDays: 90 });
    const source = new ClickHousePredictionSource(db.client, { places, workdays });
    await source.refresh();
    const version = source.model()!.modelAtMs;
    const fromClickHouse = await readServedStates(db.client, version);

    const carriers = [...new Set(delivered.map((d) => d.carrier))];
    // The states delivered into, and two islands' that no journey of this history reaches.
    const states = [...new Set([...delivered.flatMap((d) => (d.destinationState ? [d.destinationState] : [])), 'LD', 'AN'])];
    let served = 0;
    let notServed = 0;
    for (const carrier of carriers) {
      for (const state of states) {
        const expected = embeddedServed.serves('live', carrier, state);
        expect(fromClickHouse.serves('live', carrier, state), `${carrier} ${state}`).toBe(expected);
        if (expected) served++; else notServed++;
      }
    }
    // Both answers occur.
    expect(served).toBeGreaterThan(0);
    expect(notServed).toBeGreaterThan(0);

    // The API's estimator over ClickHouse answers as the embedded one with the same served states.
    const pins = [...new Set(delivered.flatMap((d) => (d.destinationPincode ? [d.destinationPincode] : [])))].slice(0, 12);
    const origin = delivered.find((d) => d.originPincode !== null)!.originPincode!;
    let answered = 0;
    for (const destination of pins) {
      const req = { mode: 'live' as const, originPincode: origin, destinationPincode: destination, shipDate: istDayOf(SPLIT), carrier: null, serviceType: null, nowMs: SPLIT };
      const answer = source.estimator.estimate(req);
      expect(answer, destination).toEqual(estimateOf(embedded, places, workdays, req, embeddedServed));
      answered += answer.estimates.length;
    }
    expect(answered).toBeGreaterThan(0);
  }, 180_000);
});
