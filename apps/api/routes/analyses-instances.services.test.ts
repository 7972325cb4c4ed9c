/**
 * Two API instances on one Redis serve the same analyses (contracts.md: "served by every API
 * instance"): accepted by one, followed, listed, exported and shared by the other; counted once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisListSchema, AnalysisSchema } from '../../../lib/analyzer/index.ts';
import { waitFor } from '../testutil/analyses.suite.ts';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';

describe('the analyzer on two API instances sharing one Redis', () => {
  let first: ApiHarness;
  let second: ApiHarness;

  beforeAll(async () => {
    first = await startApiHarness({ store: 'redis' });
    second = await startApiHarness({ store: 'redis', namespace: first.namespace });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('accepted by one, served by the other, each shipment counted once', async () => {
    const { key } = await first.createKey({ plan: 'growth', mode: 'test', burst_per_second: 10_000 });
    const headers = { 'x-api-key': key };
    const shipments = Array.from({ length: 500 }, (_, i) => ({ awb: `55${String(i).padStart(7, '0')}01${['04', '10', '05', '12'][i % 4]}`, carrier: 'delhivery' }));
    const posted = await first.app.inject({ method: 'POST', url: '/v1/analyses', headers, payload: { name: 'shared', shipments } });
    expect(posted.statusCode, posted.body).toBe(202);
    const { id } = posted.json() as { id: string };
    const view = await waitFor(async () => AnalysisSchema.parse((await second.app.inject({ method: 'GET', url: `/v1/analyses/${id}`, headers })).json()), (v) => v.status === 'completed');
    expect(view.report!.totals).toMatchObject({ shipments: 500, found: 500 });
    expect(AnalysisListSchema.parse((await second.app.inject({ method: 'GET', url: '/v1/analyses', headers })).json()).analyses.map((a) => a.id)).toEqual([id]);
    const csv = await second.app.inject({ method: 'GET', url: `/v1/analyses/${id}/shipments`, headers });
    expect(csv.body.trimEnd().split('\r\n')).toHaveLength(501);
    const share = await second.app.inject({ method: 'POST', url: `/v1/analyses/${id}/share`, headers });
    const path = new URL((share.json() as { url: string }).url).pathname;
    const page = await first.app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('shared');
    for (const h of [first, second]) expect((await h.usage(key)).analyzer).toEqual({ shipments_used: 500, shipments_limit: 4_000 });
  });
});
