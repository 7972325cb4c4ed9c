/**
 * GET /v1/estimate on the embedded default (contracts.md "Delivery prediction"): the model learned
 * from a test-mode history of the sandbox network, metering (one lookup per 200, none per refusal),
 * the errors, the answer's shape, the key modes kept apart, and the figures equal to those a
 * booked record's insights.prediction gives at the same instant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCalendar } from '../../../lib/calendar/index.ts';
import type { TrackingRecord } from '../../../lib/schemas/index.ts';
import { HOUR_MS, MINUTE_MS } from '../../../lib/time/index.ts';
import { addDays, istDayOf, istDayStartMs } from '../../../lib/time/ist-day.ts';
import { EstimateAnswerSchema } from '../openapi/schemas.ts';
import { awbFor, expectError, startApiHarness, type ApiHarness } from '../testutil/harness.ts';
import { seedHistory } from '../testutil/history.ts';

type Answer = ReturnType<typeof EstimateAnswerSchema.parse>;

describe('GET /v1/estimate', () => {
  let h: ApiHarness;
  let key: string;
  let live: string;
  const calendar = loadCalendar();

  beforeAll(async () => {
    // Thursday 2026-11-19, 12:00 IST (the harness's default start): a working day everywhere.
    h = await startApiHarness();
    // 30,000 journeys: the booked stage's cells are a day's daypart (DAY_BUCKETS), so the metro lane
    // needs this many for several carriers' cells to reach 30 (at 12,000 they fell to the zone's).
    const fed = await seedHistory(h, { shipments: 30000, days: 60, seed: 7 });
    expect(fed).toBeGreaterThan(2000);
    key = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 })).key;
    live = (await h.createKey({ plan: 'starter', mode: 'live', burst_per_second: 1000 })).key;
  }, 60_000);
  afterAll(() => h.close());

  const estimate = (path: string, apiKey: string | null = key) =>
    h.app.inject({ method: 'GET', url: `/v1/estimate/${path}`, headers: apiKey === null ? {} : { 'x-api-key': apiKey } });
  const answer = async (path: string, apiKey = key): Promise<Answer> => {
    const res = await estimate(path, apiKey);
    expect(res.statusCode, res.body).toBe(200);
    return EstimateAnswerSchema.parse(res.json());
  };
  const used = async (apiKey = key) => (await h.usage(apiKey)).period.lookups_used;

  it('answers every carrier with a basis from the booked stage, ship_date today (IST) by default, one lookup', async () => {
    const before = await used();
    const res = await estimate('110001/560001');
    expect(res.statusCode, res.body).toBe(200);
    expect(await used()).toBe(before + 1);
    expect(Number(res.headers['x-lookups-remaining'])).toBeGreaterThan(0);
    const body = res.json() as Answer;
    expect(Object.keys(body)).toEqual(['origin_pincode', 'destination_pincode', 'ship_date', 'estimates', 'fastest']);
    expect(body).toMatchObject({ origin_pincode: '110001', destination_pincode: '560001', ship_date: istDayOf(h.clock.now()) });
    expect(body.ship_date).toBe('2026-11-19');
    // The history covers every carrier on the metro lanes: several answer.
    const carriers = [...new Set(body.estimates.map((e) => e.carrier))];
    expect(carriers.length).toBeGreaterThanOrEqual(4);
    expect(body.estimates.map((e) => `${e.carrier}/${e.service_type}`)).toEqual(body.estimates.map((e) => `${e.carrier}/${e.service_type}`).sort());
    for (const e of body.estimates) {
      expect(Object.keys(e)).toEqual(['carrier', 'service_type', 'delivery_date', 'window', 'basis']);
      expect(e.basis.stage).toBe('awaiting_pickup');
      expect(e.basis.sample_size).toBeGreaterThanOrEqual(30);
      const [a80, b80] = e.window.p80;
      const [a90, b90] = e.window.p90;
      expect(a90! <= a80! && a80! <= e.delivery_date && e.delivery_date <= b80! && b80! <= b90!).toBe(true);
      expect(a90! >= body.ship_date).toBe(true);
      // Deliveries only on the destination's working days (Karnataka; the carrier's Sundays).
      for (const day of [e.delivery_date, a80!, b80!, a90!, b90!]) expect(calendar.isWorkingDay(day, { carrier: e.carrier, state: 'KA' }), `${e.carrier} ${day}`).toBe(true);
    }
    // fastest: the earliest delivery day among the estimates learned on the lane or between the states.
    const named = body.estimates.filter((e) => e.basis.level === 'lane' || e.basis.level === 'state_pair');
    expect(named.length).toBeGreaterThan(0);
    const earliest = named.map((e) => e.delivery_date).sort()[0];
    expect(named.filter((e) => e.delivery_date === earliest).map((e) => e.carrier)).toContain(body.fastest);
  });

  it('Mumbai → Agartala: a regional carrier that never delivered into Tripura is not offered; fastest only from the lane or state pair', async () => {
    const body = await answer('400001/799001');
    // Regional carriers of the sandbox network serve the South (professionalcouriers) and the West (shreemaruti) only.
    const carriers = body.estimates.map((e) => e.carrier);
    expect(carriers).not.toContain('professionalcouriers');
    expect(carriers).not.toContain('shreemaruti');
    expect((await answer('400001/799001?carrier=shreemaruti')).estimates).toEqual([]);
    // At home it is offered.
    expect((await answer('400001/380001?carrier=shreemaruti')).estimates.length).toBeGreaterThan(0);
    if (body.fastest !== null) {
      const named = body.estimates.filter((e) => e.carrier === body.fastest);
      expect(named.some((e) => e.basis.level === 'lane' || e.basis.level === 'state_pair')).toBe(true);
    }
    // Whatever the history, a carrier named fastest anywhere has a lane or state-pair basis there.
    for (const path of ['110001/560001', '400001/700001', '400001/799001']) {
      const a = await answer(path);
      if (a.fastest === null) continue;
      expect(a.estimates.some((e) => e.carrier === a.fastest && (e.basis.level === 'lane' || e.basis.level === 'state_pair')), path).toBe(true);
    }
  });

  it('a planned shipment gets what a booked record of it gets: insights.prediction at awaiting_pickup, same instant', async () => {
    const estimates = (await answer('110001/560001')).estimates;
    let compared = 0;
    for (const carrier of ['delhivery', 'bluedart', 'xpressbees', 'ekart'] as const) {
      // Scenario 25's first poll shows the shipment booked minutes ago on lane 0 (110001 → 560001).
      const res = await h.track(key, carrier, awbFor(carrier, 25, 0));
      expect(res.statusCode, res.body).toBe(200);
      const record = res.json() as TrackingRecord;
      expect(record.insights.current_stage).toBe('awaiting_pickup');
      const prediction = record.insights.prediction;
      expect(prediction, carrier).not.toBeNull();
      const service = record.shipment.service_type?.toLowerCase() ?? null;
      const match = estimates.find((e) => e.carrier === carrier && e.service_type === service);
      expect(match, `${carrier}/${service}`).toBeDefined();
      expect(match).toEqual({ carrier, service_type: service, delivery_date: prediction!.delivery_date, window: prediction!.window, basis: prediction!.basis });
      compared++;
    }
    expect(compared).toBe(4);
  });

  it('narrows to one carrier (slug or alias) and one service type (any case)', async () => {
    const all = await answer('110001/560001');
    const bluedart = await answer('110001/560001?carrier=blue-dart');
    expect(bluedart.estimates.length).toBeGreaterThan(0);
    expect(bluedart.estimates).toEqual(all.estimates.filter((e) => e.carrier === 'bluedart'));
    // fastest only from a lane or state-pair basis (contracts.md): alone, bluedart is fastest exactly when it has one.
    const sharp = bluedart.estimates.some((e) => e.basis.level === 'lane' || e.basis.level === 'state_pair');
    expect(bluedart.fastest).toBe(sharp ? 'bluedart' : null);
    const services = [...new Set(all.estimates.map((e) => e.service_type).filter((s): s is string => s !== null))];
    expect(services.length).toBeGreaterThan(0);
    const one = await answer(`110001/560001?service_type=${services[0]!.toUpperCase()}`);
    expect(one.estimates.length).toBeGreaterThan(0);
    expect(one.estimates).toEqual(all.estimates.filter((e) => e.service_type === services[0]));
    const none = await answer('110001/560001?service_type=hovercraft');
    expect(none).toMatchObject({ estimates: [], fastest: null });
  });

  it('picks up only on the carrier\'s working days at the origin: a Sunday or a holiday ship date answers as the next working day', async () => {
    // 2026-11-22 is a Sunday, 2026-11-24 Guru Nanak Jayanti (all states); delhivery rests on both.
    expect(calendar.isWorkingDay('2026-11-22', { carrier: 'delhivery', state: 'DL' })).toBe(false);
    expect(calendar.isWorkingDay('2026-11-23', { carrier: 'delhivery', state: 'DL' })).toBe(true);
    expect(calendar.isWorkingDay('2026-11-24', { carrier: 'delhivery', state: 'DL' })).toBe(false);
    expect(calendar.isWorkingDay('2026-11-25', { carrier: 'delhivery', state: 'DL' })).toBe(true);
    const at = async (day: string) => (await answer(`110001/560001?carrier=delhivery&ship_date=${day}`)).estimates;
    const sunday = await at('2026-11-22');
    expect(sunday.length).toBeGreaterThan(0);
    expect(sunday).toEqual(await at('2026-11-23'));
    expect(await at('2026-11-24')).toEqual(await at('2026-11-25'));
    // A later pickup is a later (or equal) delivery, never an earlier one.
    expect((await at('2026-11-25'))[0]!.delivery_date >= sunday[0]!.delivery_date).toBe(true);
    expect((await at('2026-11-23'))[0]!.delivery_date >= (await at('2026-11-19'))[0]!.delivery_date).toBe(true);
  });

  it('refusals consume nothing: malformed pincode, bad or impossible or out-of-range date, unknown carrier, no key', async () => {
    const before = await used();
    const today = istDayOf(h.clock.now());
    for (const path of ['1100/560001', '110001/56000X', '110001/5600011']) expectError(await estimate(path), 400, 'invalid_pincode');
    // A malformed pincode is named first, whatever else is wrong.
    expectError(await estimate('1100/560001?ship_date=nope&carrier=fedex'), 400, 'invalid_pincode');
    for (const date of ['2026-02-30', '2026-13-01', '19-11-2026', '2026-11-19T00:00:00Z', 'tomorrow', addDays(today, -2), addDays(today, 91)]) {
      expectError(await estimate(`110001/560001?ship_date=${encodeURIComponent(date)}`), 400, 'invalid_date');
    }
    expectError(await estimate('110001/560001?ship_date=2026-11-19&ship_date=2026-11-20'), 400, 'invalid_date');
    expectError(await estimate('110001/560001?carrier=fedex'), 400, 'unsupported_carrier');
    expectError(await estimate(`110001/560001?service_type=${'x'.repeat(61)}`), 400, 'bad_request');
    expectError(await estimate('110001/560001', null), 401, 'missing_api_key');
    // HEAD would be metered like a GET and show nothing for it: refused (its answer has no body).
    const head = await h.app.inject({ method: 'HEAD', url: '/v1/estimate/110001/560001', headers: { 'x-api-key': key } });
    expect(head.statusCode).toBe(405);
    expect(head.headers.allow).toBe('GET');
    expectError(await h.app.inject({ method: 'POST', url: '/v1/estimate/110001/560001', headers: { 'x-api-key': key } }), 405, 'method_not_allowed');
    expect(await used()).toBe(before);
    // The accepted range's ends: yesterday and 90 days ahead, one lookup each.
    const yesterday = await answer(`110001/560001?ship_date=${addDays(today, -1)}`);
    expect(yesterday.ship_date).toBe(addDays(today, -1));
    expect((await answer(`110001/560001?ship_date=${addDays(today, 90)}`)).ship_date).toBe(addDays(today, 90));
    expect(await used()).toBe(before + 2);
  });

  it('live keys read the live network\'s model: the sandbox\'s history is not theirs (still one lookup)', async () => {
    const before = await used(live);
    expect(await answer('110001/560001', live)).toEqual({ origin_pincode: '110001', destination_pincode: '560001', ship_date: istDayOf(h.clock.now()), estimates: [], fastest: null });
    expect(await used(live)).toBe(before + 1);
    expect((await answer('110001/560001')).estimates.length).toBeGreaterThan(0);
  });

  it('a later ship date equals the prediction of a record booked that morning (the clock moved there)', async () => {
    const planned = (await answer('110001/560001?carrier=delhivery&ship_date=2026-11-23')).estimates;
    expect(planned.length).toBeGreaterThan(0);
    const back = h.clock.now();
    try {
      // Ten minutes into Monday 2026-11-23 (IST): the record's booking (4 minutes before its first poll)
      // is that morning, as the estimate's is (the booked stage counts the day since the booking and
      // the hour: a Sunday night's booking asked on Monday morning is another cell).
      h.clock.set(istDayStartMs('2026-11-23') + 10 * MINUTE_MS);
      const res = await h.track(key, 'delhivery', awbFor('delhivery', 25, 10));
      const record = res.json() as TrackingRecord;
      expect(record.insights.current_stage).toBe('awaiting_pickup');
      expect(Date.parse(record.shipment.booked_at!)).toBeGreaterThan(h.clock.now() - HOUR_MS);
      const service = record.shipment.service_type?.toLowerCase() ?? null;
      const { basis, delivery_date, window } = record.insights.prediction!;
      expect(planned.find((e) => e.service_type === service)).toEqual({ carrier: 'delhivery', service_type: service, delivery_date, window, basis });
    } finally {
      h.clock.set(back);
    }
  });
});
