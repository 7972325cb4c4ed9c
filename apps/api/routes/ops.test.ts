/** Operations: health, readiness, metrics, the OpenAPI document and docs page, and what the logs hold. */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema, TrackingRecordSchema, UsageRecordSchema } from '../../../lib/schemas/index.ts';
import type { TrackingService } from '../../../lib/tracking/index.ts';
import { ADMIN_TOKEN, awbFor, expectError, expectRecord, startApiHarness, type ApiHarness } from '../testutil/harness.ts';
import { keyIn, mailsTo } from '../testutil/mail.ts';

describe('health and readiness', () => {
  let h: ApiHarness;
  beforeAll(async () => { h = await startApiHarness(); });
  afterAll(() => h.close());

  it('/healthz answers 200', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('/readyz answers 200 while its dependencies answer, 503 naming the one that does not', async () => {
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: [{ name: 'access', ok: true }, { name: 'carrier-sandbox', ok: true }] });

    await h.closeSandbox();
    const down = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(down.statusCode).toBe(503);
    const body = down.json() as { status: string; checks: { name: string; ok: boolean }[] };
    expect(body.status).toBe('not_ready');
    expect(body.checks).toEqual([{ name: 'access', ok: true }, expect.objectContaining({ name: 'carrier-sandbox', ok: false })]);
    // Liveness is not readiness: the process itself is fine.
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('metrics', () => {
  let h: ApiHarness;
  beforeAll(async () => { h = await startApiHarness(); });
  afterAll(() => h.close());

  it('/metrics exposes lookup, cache and carrier metrics after some lookups', async () => {
    const k = await h.createKey({ burst_per_second: 100 });
    expectRecord(await h.track(k.key, 'delhivery', awbFor('delhivery', 2)));
    expectRecord(await h.track(k.key, 'delhivery', awbFor('delhivery', 2)));
    expectError(await h.track(k.key, 'delhivery', awbFor('delhivery', 0)), 404, 'shipment_not_found');
    expectError(await h.track(k.key, 'delhivery', awbFor('delhivery', 0)), 404, 'shipment_not_found');
    expectError(await h.track(k.key, 'bluedart', awbFor('bluedart', 17)), 502, 'upstream_error');

    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    for (const name of ['tracking_lookups_total', 'tracking_cache_hits_total', 'tracking_carrier_poll_seconds', 'tracking_carrier_errors_total']) {
      expect(res.body).toContain(`# TYPE ${name} `);
    }
    expect(await h.metric('tracking_lookups_total', { carrier: 'delhivery', outcome: 'live' })).toBe(1);
    expect(await h.metric('tracking_lookups_total', { carrier: 'delhivery', outcome: 'cached' })).toBe(1);
    expect(await h.metric('tracking_lookups_total', { carrier: 'delhivery', outcome: 'not_found' })).toBe(2);
    expect(await h.metric('tracking_lookups_total', { carrier: 'bluedart', outcome: 'upstream_error' })).toBe(1);
    expect(await h.metric('tracking_cache_hits_total', { carrier: 'delhivery', kind: 'fresh' })).toBe(1);
    expect(await h.metric('tracking_cache_hits_total', { carrier: 'delhivery', kind: 'not_found' })).toBe(1);
    expect(await h.metric('tracking_carrier_poll_seconds_count', { carrier: 'delhivery', outcome: 'ok' })).toBe(1);
    expect(await h.metric('tracking_carrier_poll_seconds_count', { carrier: 'delhivery', outcome: 'not_found' })).toBe(1);
    expect(await h.metric('tracking_carrier_poll_seconds_count', { carrier: 'bluedart', outcome: 'error' })).toBe(1);
    expect(await h.metric('tracking_carrier_errors_total', { carrier: 'bluedart' })).toBe(1);
    // Process metrics come along for the dashboards.
    expect(res.body).toContain('process_cpu_user_seconds_total');
  });
});

describe('OpenAPI and docs', () => {
  let h: ApiHarness;
  beforeAll(async () => { h = await startApiHarness(); });
  afterAll(() => h.close());

  it('/openapi.json is OpenAPI 3.1 with the track and usage operations and the response schemas', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      openapi: string;
      paths: Record<string, Record<string, { parameters?: { name: string; schema: { enum?: string[] } }[]; responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { type?: string; properties?: Record<string, unknown>; required?: string[] }>; securitySchemes: Record<string, unknown> };
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    const track = doc.paths['/v1/track/{carrier}/{awb}']?.get;
    expect(track).toBeDefined();
    // Every status the route can answer, from the codes it throws (openapi/spec.ts errorCodesOf).
    expect(Object.keys(track!.responses).sort()).toEqual(['200', '400', '401', '402', '404', '408', '429', '431', '500', '502']);
    const carrierEnum = track!.parameters?.find((p) => p.name === 'carrier')?.schema.enum ?? [];
    for (const name of ['delhivery', 'bluedart', 'bd', 'professionalcouriers', 'tpc', 'indiapost', 'ekart']) expect(carrierEnum).toContain(name);
    expect(doc.paths['/v1/usage']?.get?.responses['200']).toBeDefined();
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });

    // The documented schemas are the ones every answer is validated against here.
    const record = doc.components.schemas.TrackingRecord;
    expect(record?.type).toBe('object');
    expect(Object.keys(record?.properties ?? {}).sort()).toEqual(Object.keys(TrackingRecordSchema.shape).sort());
    expect([...(record?.required ?? [])].sort()).toEqual(Object.keys(TrackingRecordSchema.shape).sort());
    expect(Object.keys(doc.components.schemas.UsageRecord?.properties ?? {}).sort()).toEqual(Object.keys(UsageRecordSchema.shape).sort());
    expect(Object.keys(doc.components.schemas.ErrorBody?.properties ?? {})).toEqual(Object.keys(ErrorBodySchema.shape));
  });

  it('/docs serves an HTML page', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<!DOCTYPE html>/i);
  });
});

describe('logs', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  let h: ApiHarness;
  beforeAll(async () => {
    // The tracking service throws for one carrier, so the unexpected-error path is logged too.
    h = await startApiHarness({
      logLevel: 'info',
      deps: (deps) => {
        const real = deps.tracking;
        const tracking = {
          readCache: real.readCache.bind(real),
          lookup: (...args: Parameters<TrackingService['lookup']>) => {
            if (args[0] === 'ekart') throw new Error('lookup failed');
            return real.lookup(...args);
          },
        } as unknown as TrackingService;
        return { ...deps, tracking, logStream: sink };
      },
    });
  });
  afterAll(() => h.close());

  it('never contain a full key or the admin token, wherever a client puts them', async () => {
    const k = await h.createKey({ burst_per_second: 100 });
    const unknown = 'trk_live_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ';
    expectRecord(await h.track(k.key, 'delhivery', awbFor('delhivery', 2)));
    expectError(await h.track(k.key, 'delhivery', awbFor('delhivery', 0)), 404, 'shipment_not_found');
    expectError(await h.track(k.key, 'ekart', awbFor('ekart', 2)), 500, 'internal_error');
    expectError(await h.track(unknown, 'delhivery', awbFor('delhivery', 2)), 401, 'invalid_api_key');
    await h.usage(k.key);
    // Mistakes clients and operators make: a key in the query string, a full key as an admin prefix.
    await h.app.inject({ method: 'GET', url: `/v1/usage?api_key=${k.key}`, headers: { 'x-api-key': k.key } });
    await h.app.inject({ method: 'GET', url: `/v1/track/delhivery/${unknown}`, headers: { 'x-api-key': k.key } });
    expectError(await h.admin('GET', `/admin/keys/${k.key}`), 400, 'bad_request');
    await h.admin('POST', `/admin/keys/${k.key_prefix}/suspend`);
    expect((await h.app.inject({ method: 'POST', url: '/trial', payload: { email: 'logs@example.com' } })).statusCode).toBe(202);
    const trialKey = keyIn((await mailsTo(h.dataDir, 'logs@example.com'))[0] ?? '');
    expect(trialKey).not.toBeNull();

    const text = lines.join('\n');
    // The capture works: every request was logged, with its id and its path.
    expect(lines.filter((l) => l.includes('"request completed"')).length).toBeGreaterThanOrEqual(11);
    expect(text).toContain('/v1/track/delhivery/');
    expect(text).toContain('unexpected error');
    expect(text).toContain(k.key_prefix);
    for (const secret of [k.key, unknown, trialKey!, ADMIN_TOKEN, 'logs@example.com']) expect(text).not.toContain(secret);
  });
});
