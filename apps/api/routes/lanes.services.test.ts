import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_CLICKHOUSE_URL, type TestDatabase } from '../../../lib/clickhouse/testutil/database.ts';
import { readLaneStats, refreshLaneStats } from '../../../lib/clickhouse/lanes-window.ts';
import { writeClosures } from '../../../lib/clickhouse/lanes-closures.ts';
import type { LaneClosure } from '../../../lib/lanes/index.ts';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';
import type { KeyMode } from '../../../lib/schemas/index.ts';

/** Closures of a lane in the harness clock's window: `n` deliveries of 1..n days, every 4th late, every 5th after a failed attempt. */
function closures(carrier: string, n: number, mode: KeyMode, nowMs: number): LaneClosure[] {
  return Array.from({ length: n }, (_, i) => ({
    lane: `${mode === 'test' ? 'test:' : ''}${carrier}:110:560`, carrier, awb: `${carrier.toUpperCase()}${i}`, mode, outcome: 'delivered',
    closedAtS: Math.floor(nowMs / 1000) - 86_400 * (1 + (i % 30)), transitDays: 1 + i / 10, onTime: i % 4 === 0 ? 0 : 1,
    firstAttempt: i % 5 === 0 ? 0 : 1, ndrReasons: i % 5 === 0 ? ['customer_unavailable'] : [], version: 1,
  }));
}

describe('GET /v1/lanes/{origin}/{destination} (real ClickHouse)', () => {
  let db: TestDatabase;
  let api: ApiHarness;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApiHarness({ env: { CLICKHOUSE_URL: TEST_CLICKHOUSE_URL }, clickhouseDatabase: db.target.database });
    const now = api.clock.now();
    await writeClosures(db.client, [...closures('delhivery', 40, 'live', now), ...closures('dtdc', 35, 'live', now), ...closures('bluedart', 10, 'live', now), ...closures('ekart', 31, 'test', now)]);
    await refreshLaneStats(db.client, { nowMs: now, windowDays: 90 });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('answers every carrier of the lane with the figures of lane_stats, and consumes one lookup', async () => {
    const { key } = await api.createKey({ mode: 'live' });
    const before = await api.usage(key);
    const res = await api.app.inject({ method: 'GET', url: '/v1/lanes/110001/560001', headers: { 'x-api-key': key } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const stored = await readLaneStats(db.client, ['delhivery:110:560', 'dtdc:110:560'], 90);
    const delhivery = stored.find((s) => s.carrier === 'delhivery')!;
    expect(body).toMatchObject({ origin_prefix: '110', destination_prefix: '560', window_days: 90 });
    expect(body.carriers.map((c: { carrier: string }) => c.carrier)).toEqual(['bluedart', 'delhivery', 'dtdc']);
    expect(body.carriers[1]).toEqual({
      carrier: 'delhivery', sample_size: 40, p50_transit_days: delhivery.p50_transit_days, p90_transit_days: delhivery.p90_transit_days,
      on_time_rate: delhivery.on_time_rate, first_attempt_rate: delhivery.first_attempt_rate, rto_rate: 0, ndr_reasons: { customer_unavailable: 1 },
    });
    expect(body.carriers[0]).toMatchObject({ carrier: 'bluedart', sample_size: 10, p50_transit_days: null, ndr_reasons: null });
    expect(body.fastest).toBe(stored.sort((a, b) => a.p50_transit_days! - b.p50_transit_days!)[0]!.carrier);
    expect(body.most_reliable).not.toBeNull();
    expect((await api.usage(key)).period.lookups_used).toBe(before.period.lookups_used + 1);
  });

  it('trk_test_ keys see the sandbox lanes only', async () => {
    const { key } = await api.createKey({ mode: 'test' });
    const res = await api.app.inject({ method: 'GET', url: '/v1/lanes/110001/560001', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    expect(res.json().carriers.map((c: { carrier: string }) => c.carrier)).toEqual(['ekart']);
  });

  it('refuses a malformed pincode with 400 invalid_pincode and consumes nothing; no key → 401', async () => {
    const { key } = await api.createKey({ mode: 'live' });
    const before = await api.usage(key);
    for (const url of ['/v1/lanes/11001/560001', '/v1/lanes/110001/56000A', '/v1/lanes/1100011/560001']) {
      const res = await api.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_pincode' });
    }
    expect((await api.usage(key)).period.lookups_used).toBe(before.period.lookups_used);
    expect((await api.app.inject({ method: 'GET', url: '/v1/lanes/110001/560001' })).statusCode).toBe(401);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/lanes/{origin_pincode}/{destination_pincode}'].get.responses['400']).toBeDefined();
    expect(doc.components.schemas.LaneComparison.required).toContain('most_reliable');
  });
});

describe('npm run cli -- lanes', () => {
  it('prints the comparison as a table against a running API', async () => {
    const { runCli } = await import('../../cli/commands/cli.ts');
    const db = await createTestDatabase();
    const api = await startApiHarness({ env: { CLICKHOUSE_URL: TEST_CLICKHOUSE_URL }, clickhouseDatabase: db.target.database });
    try {
      await writeClosures(db.client, closures('delhivery', 40, 'live', api.clock.now()));
      await refreshLaneStats(db.client, { nowMs: api.clock.now() });
      const { key } = await api.createKey({ mode: 'live' });
      const url = await api.listen();
      let out = '';
      const code = await runCli(['lanes', '110001', '560001', '--key', key, '--url', url], { env: {}, stdout: (t) => { out += t; }, stderr: (t) => { out += t; } });
      expect(code, out).toBe(0);
      const [stats] = await readLaneStats(db.client, ['delhivery:110:560'], 90);
      expect(out).toContain('Lane 110xxx → 560xxx, shipments closed in the last 90 days');
      expect(out).toMatch(new RegExp(`delhivery \\(fastest, most reliable\\)\\s+40\\s+${stats!.p50_transit_days!.toFixed(1)}\\s+${stats!.p90_transit_days!.toFixed(1)}`));
      // The API answered from its copy of lane_stats: the table says when it was read and read next.
      expect(out).toMatch(/Figures as cached by the API at \d\d:\d\d:\d\d UTC \(\d+ s ago\); it reads them again (at the next request|at \d\d:\d\d:\d\d UTC \(in \d+ s\))\./);
      let err = '';
      expect(await runCli(['lanes', '11000', '560001', '--key', key, '--url', url], { env: {}, stdout: () => undefined, stderr: (t) => { err += t; } })).toBe(1);
      expect(err).toContain('invalid_pincode');
    } finally {
      await api.close();
      await db.drop();
    }
  });
});
