/**
 * Distributed mode (CLICKHOUSE_URL set): a completed analysis writes one analysis_shipments row per
 * shipment, with the figures its shipments CSV shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisSchema } from '../../../lib/analyzer/index.ts';
import { createTestDatabase, rowsOf, TEST_CLICKHOUSE_URL, type TestDatabase } from '../../../lib/clickhouse/testutil/database.ts';
import { waitFor } from '../testutil/analyses.suite.ts';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';

describe('analysis_shipments rows of a completed analysis (real ClickHouse)', () => {
  let db: TestDatabase;
  let api: ApiHarness;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApiHarness({ env: { CLICKHOUSE_URL: TEST_CLICKHOUSE_URL }, clickhouseDatabase: db.target.database });
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('one row per shipment, as the shipments CSV', async () => {
    const { key, key_prefix } = await api.createKey({ plan: 'growth', mode: 'test', burst_per_second: 1000 });
    const headers = { 'x-api-key': key };
    const shipments = [
      { awb: '1234567010104', carrier: 'delhivery', payment_mode: 'cod', order_id: 'A-1' },
      { awb: '1234567020110', carrier: 'delhivery', payment_mode: 'prepaid' },
      { awb: '1234567030112', carrier: 'delhivery' },
      { awb: '1234567040100', carrier: 'delhivery' },
    ];
    const posted = await api.app.inject({ method: 'POST', url: '/v1/analyses', headers, payload: { shipments } });
    expect(posted.statusCode, posted.body).toBe(202);
    const { id } = posted.json() as { id: string };
    await waitFor(async () => AnalysisSchema.parse((await api.app.inject({ method: 'GET', url: `/v1/analyses/${id}`, headers })).json()), (v) => v.status === 'completed');
    const rows = await waitFor(
      () => rowsOf<Record<string, unknown>>(db.client, `SELECT awb, key_prefix, mode, result, outcome, attempts, first_attempt_delivered, ndr_reasons, payment_mode, order_id, lane FROM analysis_shipments FINAL WHERE analysis_id = '${id}' ORDER BY awb`),
      (r) => r.length === 4,
    );
    expect(rows).toEqual([
      { awb: '1234567010104', key_prefix, mode: 'test', result: 'found', outcome: 'delivered', attempts: 1, first_attempt_delivered: 1, ndr_reasons: [], payment_mode: 'cod', order_id: 'A-1', lane: 'delhivery:400:700' },
      { awb: '1234567020110', key_prefix, mode: 'test', result: 'found', outcome: 'delivered', attempts: 2, first_attempt_delivered: 0, ndr_reasons: ['customer_unavailable'], payment_mode: 'prepaid', order_id: '', lane: 'delhivery:400:700' },
      { awb: '1234567030112', key_prefix, mode: 'test', result: 'found', outcome: 'rto', attempts: 3, first_attempt_delivered: null, ndr_reasons: ['customer_unavailable', 'premises_closed', 'customer_unavailable'], payment_mode: '', order_id: '', lane: 'delhivery:400:700' },
      { awb: '1234567040100', key_prefix, mode: 'test', result: 'not_found', outcome: '', attempts: 0, first_attempt_delivered: null, ndr_reasons: [], payment_mode: '', order_id: '', lane: '' },
    ]);
  });
});
