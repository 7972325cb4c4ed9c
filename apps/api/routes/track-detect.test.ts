/**
 * Carrier auto-detection through the API: GET /v1/carriers, GET /v1/carriers/detect/{awb} and
 * GET /v1/track/{awb}. The sandbox answers any number for any carrier, so "a carrier that does not
 * know the number" is its `unknown` fault. Embedded store (metering itself is batch.test.ts's and
 * track.test.ts's subject, on both stores).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadProductConfig, DEFAULT_CONFIG_DIR } from '../../../lib/config/index.ts';
import { MINUTE_MS, expectError, expectRecord, startApiHarness, type ApiHarness, type CreateKeyBody } from '../testutil/harness.ts';

const ROOMY: Partial<CreateKeyBody> = { burst_per_second: 1000, daily_quota: 10_000, lookups_limit: 100_000 };
const CARRIERS = loadProductConfig(DEFAULT_CONFIG_DIR).carriers;

interface Candidate { slug: string; name: string; confidence: number }

describe('carrier detection', () => {
  let h: ApiHarness;
  let key: string;
  const used = async () => (await h.usage(key)).period.lookups_used;
  const get = (url: string, withKey = true) => h.app.inject({ method: 'GET', url, headers: withKey ? { 'x-api-key': key } : {} });
  const candidates = async (awb: string): Promise<Candidate[]> => {
    const res = await get(`/v1/carriers/detect/${awb}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { candidates: Candidate[] }).candidates;
  };
  /** Every carrier but `except` answers "no such number". */
  const onlyKnownBy = async (except: string | null) => {
    for (const c of CARRIERS) await h.faults(c.slug, c.slug === except ? {} : { unknown: true });
  };

  beforeAll(async () => {
    h = await startApiHarness();
    key = (await h.createKey(ROOMY)).key;
  });
  afterAll(() => h.close());
  afterEach(async () => {
    for (const c of CARRIERS) await h.faults(c.slug, {});
    // Past the 5 minutes "not found" answers are cached, so no test sees another's.
    h.clock.advance(10 * MINUTE_MS);
  });

  it('GET /v1/carriers lists the 11 carriers with aliases and an example number, without a key', async () => {
    const res = await get('/v1/carriers', false);
    expect(res.statusCode).toBe(200);
    const { carriers } = res.json() as { carriers: { slug: string; name: string; aliases: string[]; example_awb: string }[] };
    expect(carriers.map((c) => c.slug)).toEqual(CARRIERS.map((c) => c.slug));
    for (const c of carriers) {
      expect(Object.keys(c)).toEqual(['slug', 'name', 'aliases', 'example_awb']);
      expect(c.example_awb).toMatch(/^[A-Z0-9]{4,40}$/);
    }
    expect(carriers.find((c) => c.slug === 'bluedart')?.aliases).toContain('bd');
  });

  it('GET /v1/carriers/detect needs a key, consumes nothing, and ranks by the measured share', async () => {
    expectError(await get('/v1/carriers/detect/26805710004126', false), 401, 'missing_api_key');
    const before = await used();
    const list = await candidates('26805710004126');
    // Of the sample's 14-digit numbers, 3 are Delhivery's and 1 Xpressbees'.
    expect(list.slice(0, 2)).toEqual([
      { slug: 'delhivery', name: 'Delhivery', confidence: 0.75 },
      { slug: 'xpressbees', name: 'Xpressbees', confidence: 0.25 },
    ]);
    expect(list.map((c) => c.slug)).toEqual(expect.arrayContaining(['shreemaruti', 'shiprocket']));
    expect(await candidates('hello-world')).toEqual([]);
    expectError(await get('/v1/carriers/detect/ab'), 400, 'invalid_awb');
    expect(await used()).toBe(before);
  });

  it.each(CARRIERS.map((c) => [c.slug, c.example_awb!] as const))('detects %s from its sandbox number %s, probing at most 3 carriers', async (slug, awb) => {
    const ranked = (await candidates(awb)).map((c) => c.slug);
    expect(ranked.slice(0, 3)).toContain(slug);
    await onlyKnownBy(slug);
    const before = await used();
    const record = expectRecord(await get(`/v1/track/${awb}`));
    expect(record.carrier).toBe(slug);
    expect(record.awb).toBe(awb);
    expect(await used()).toBe(before + 1);
  });

  it('asks the most likely carrier first: without an ambiguity in the sandbox, the top candidate answers', async () => {
    for (const [awb, slug] of [['12345670104', 'bluedart'], ['FMPC0279658213', 'ekart'], ['SF100000022431JIF', 'shadowfax'], ['7D9128969', 'dtdc']] as const) {
      expect(expectRecord(await get(`/v1/track/${awb}`)).carrier).toBe(slug);
    }
  });

  it('settles an ambiguous shape by probing, consumes one lookup, and caches under the real carrier', async () => {
    const awb = '26805710004126';
    await onlyKnownBy('xpressbees');
    const polls = { delhivery: await h.carrierPolls('delhivery'), xpressbees: await h.carrierPolls('xpressbees') };
    const before = await used();
    const record = expectRecord(await get(`/v1/track/${awb}`));
    expect(record).toMatchObject({ carrier: 'xpressbees', cached: false });
    expect(await h.carrierPolls('delhivery')).toBe(polls.delhivery + 1);
    expect(await h.carrierPolls('xpressbees')).toBe(polls.xpressbees + 1);
    expect(await used()).toBe(before + 1);
    // Named afterwards: a cache hit, no carrier asked.
    expect(expectRecord(await h.track(key, 'xpressbees', awb)).cached).toBe(true);
    expect(await h.carrierPolls('xpressbees')).toBe(polls.xpressbees + 1);
  });

  it('answers 404 after 3 carriers, consuming one lookup, when none knows the number', async () => {
    const awb = '1234567890199';
    expect((await candidates(awb)).length).toBe(4);
    await onlyKnownBy(null);
    const total = await h.carrierPolls();
    const before = await used();
    const error = expectError(await get(`/v1/track/${awb}`), 404, 'shipment_not_found');
    expect(error.message).toContain('delhivery, xpressbees, shreemaruti');
    expect(await h.carrierPolls()).toBe(total + 3);
    expect(await used()).toBe(before + 1);
  });

  it('answers 502 when a candidate is down and none of the others knows it, consuming nothing', async () => {
    await onlyKnownBy(null);
    await h.faults('bluedart', { outage: true });
    const before = await used();
    expectError(await get('/v1/track/12345670199'), 502, 'upstream_error');
    expect(await used()).toBe(before);
  });

  it('400 carrier_not_detected when no shape fits, 400 invalid_awb for a bad number, nothing consumed', async () => {
    const before = await used();
    expectError(await get('/v1/track/HELLO-WORLD'), 400, 'carrier_not_detected');
    expectError(await get('/v1/track/ab'), 400, 'invalid_awb');
    expectError(await get('/v1/track/HELLO-WORLD', false), 401, 'missing_api_key');
    expect(await used()).toBe(before);
    // A carrier without its number is still no resource.
    expectError(await get('/v1/track/delhivery'), 404, 'not_found');
  });

  it('/openapi.json and /docs document batch, detected track and the carrier operations', async () => {
    const doc = (await get('/openapi.json', false)).json() as { paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>; components: { schemas: Record<string, unknown> } };
    expect(doc.paths['/v1/track/batch']?.post?.operationId).toBe('trackBatch');
    expect(Object.keys(doc.paths['/v1/track/batch']?.post?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '402', '422', '429']));
    expect(doc.paths['/v1/track/{awb}']?.get?.operationId).toBe('trackDetected');
    expect(doc.paths['/v1/carriers']?.get?.operationId).toBe('listCarriers');
    expect(doc.paths['/v1/carriers/detect/{awb}']?.get?.operationId).toBe('detectCarrier');
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['BatchRequest', 'BatchResponse', 'CarrierList', 'DetectResponse']));
    expect((await get('/docs/', false)).statusCode).toBe(200);
  });
});
