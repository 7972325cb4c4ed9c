/**
 * The documents are the API: every operation of /openapi.json and /admin/openapi.json is called
 * here with good and bad input (among them every drift an integrator found: 401 on push calls
 * without a key, 400 on limit=0 and on an unknown carrier, 404 on deliveries of an unknown
 * endpoint, 429 on management calls past the burst, a replayed batch's headers), every answer is
 * validated against the documents (contract.ts), and the documents pass an independent OpenAPI
 * 3.1 validator. Every other API suite's answers are validated too, by the harness.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngOf } from '../../../lib/branding/testutil/images.ts';
import { openApiPath } from './document.ts';
import { ADMIN_TOKEN, awbFor, expectError, startApiHarness, type ApiHarness } from '../testutil/harness.ts';

type Doc = { paths: Record<string, Record<string, unknown>> };

/** JSON pointers of schemas that say `type: object` and nothing of their fields. */
function bareObjects(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => bareObjects(v, `${at}/${i}`));
  if (!value || typeof value !== 'object') return [];
  const object = value as Record<string, unknown>;
  const bare = object.type === 'object' && !('properties' in object) && !('additionalProperties' in object) && !('propertyNames' in object);
  return [...(bare ? [at] : []), ...Object.entries(object).flatMap(([k, v]) => bareObjects(v, `${at}/${k}`))];
}

describe('the OpenAPI documents describe every answer', () => {
  let h: ApiHarness;
  let key: string;
  let prefix: string;
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, options: { body?: unknown; apiKey?: string | null; headers?: Record<string, string> } = {}) =>
    h.app.inject({
      method, url,
      headers: { ...(options.apiKey === null ? {} : { 'x-api-key': options.apiKey ?? key }), ...options.headers },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });

  beforeAll(async () => {
    h = await startApiHarness();
    const created = await h.createKey({ plan: 'growth', mode: 'test', burst_per_second: 1000 });
    key = created.key;
    prefix = created.key_prefix;
  });
  afterAll(() => h.close());

  it('the public and admin documents pass an independent OpenAPI 3.1 validator', async () => {
    const docs = [(await h.app.inject({ method: 'GET', url: '/openapi.json' })).json(), (await h.admin('GET', '/admin/openapi.json')).json()];
    for (const doc of docs) {
      const result = await new Validator().validate(doc);
      expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
      expect(result.valid).toBe(true);
      expect((doc as { openapi: string }).openapi).toBe('3.1.0');
      // No answer is described as a bare object (a generated client would type it `{}`).
      expect(bareObjects(doc)).toEqual([]);
    }
    // The events the API sends are described too (OpenAPI 3.1 webhooks), eta_changed with its previous day.
    const webhooks = (docs[0] as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }> }).webhooks;
    expect(Object.keys(webhooks)).toEqual(['tracking', 'tracking.eta_changed', 'tracking.running_late', 'webhook.test']);
    const dataOf = (type: string) => {
      const ref = webhooks[type]!.post.requestBody.content['application/json']!.schema.$ref;
      const schemas = (docs[0] as { components: { schemas: Record<string, { properties: { data: { properties: Record<string, unknown> } } }> } }).components.schemas;
      return Object.keys(schemas[ref.split('/').pop()!]!.properties.data.properties);
    };
    const common = ['carrier', 'awb', 'sequence', 'previous', 'new_events', 'tracking'];
    expect(dataOf('tracking.eta_changed')).toEqual([...common, 'previous_delivery_date']);
    expect(dataOf('tracking.running_late')).toEqual([...common, 'promised_by', 'on_time_probability', 'delivery_date']);
  });

  it('the admin document is behind the admin token', async () => {
    expectError(await h.app.inject({ method: 'GET', url: '/admin/openapi.json' }), 401, 'unauthorized');
    const doc = (await h.admin('GET', '/admin/openapi.json')).json() as Doc;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/admin/keys', '/admin/keys/{prefix}', '/admin/keys/{prefix}/renew', '/admin/payments']));
    const pub = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
    expect(Object.keys(pub.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
  });

  it('push operations without a key: 401, declared', async () => {
    const calls: ['GET' | 'POST' | 'DELETE', string][] = [
      ['POST', '/v1/webhooks'], ['GET', '/v1/webhooks'], ['GET', '/v1/webhooks/wh_x'], ['DELETE', '/v1/webhooks/wh_x'],
      ['POST', '/v1/webhooks/wh_x/rotate-secret'], ['POST', '/v1/webhooks/wh_x/enable'], ['POST', '/v1/webhooks/wh_x/test'],
      ['GET', '/v1/webhooks/wh_x/deliveries'], ['POST', '/v1/webhooks/wh_x/deliveries/evt_x/resend'],
      ['POST', '/v1/trackings'], ['GET', '/v1/trackings'], ['GET', '/v1/trackings/delhivery/1234567890102'], ['DELETE', '/v1/trackings/delhivery/1234567890102'],
      ['DELETE', '/v1/trackings/delhivery/1234567890102/customer'], ['GET', '/v1/notices/settings'], ['GET', '/v1/notices'],
    ];
    for (const [method, url] of calls) {
      expectError(await call(method, url, { apiKey: null, ...(method === 'POST' ? { body: {} } : {}) }), 401, 'missing_api_key');
    }
  });

  it('bad input on management calls: 400 on limit=0 and on an unknown carrier, 404 on an unknown endpoint', async () => {
    expectError(await call('GET', '/v1/trackings?limit=0'), 400, 'bad_request');
    expectError(await call('GET', '/v1/trackings/nosuchcarrier/1234567890102'), 400, 'unsupported_carrier');
    expectError(await call('GET', '/v1/webhooks/wh_unknown/deliveries'), 404, 'not_found');
    expectError(await call('POST', '/v1/webhooks', { body: { url: 'not a url' } }), 400, 'invalid_url');
  });

  it('every push operation with good input', async () => {
    const awb = awbFor('delhivery', 2);
    const watched = await call('POST', '/v1/trackings', { body: { carrier: 'delhivery', awb } });
    expect(watched.statusCode, watched.body).toBe(201);
    expect((await call('POST', '/v1/trackings', { body: { carrier: 'delhivery', awb } })).statusCode).toBe(200);
    expect((await call('GET', '/v1/trackings?limit=10')).statusCode).toBe(200);
    expect((await call('GET', `/v1/trackings/delhivery/${awb}`)).statusCode).toBe(200);
    // The tracking pages of a watch and its order: no key; an unknown token is the 404 page.
    const ordered = await call('POST', '/v1/trackings', { body: { carrier: 'delhivery', awb: awbFor('delhivery', 3), order_id: 'ORD-1' } });
    const links = (ordered.json() as { watch: { page_url: string; order_page_url: string } }).watch;
    for (const url of [links.page_url, links.order_page_url]) expect((await call('GET', new URL(url).pathname, { apiKey: null })).statusCode).toBe(200);
    for (const path of ['/t/nonsense', '/o/nonsense']) expect((await call('GET', path, { apiKey: null })).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/trackings/delhivery/${awb}`)).statusCode).toBe(204);
    expectError(await call('GET', `/v1/trackings/delhivery/${awb}`), 404, 'not_found');

    // Customer notices: a contact on a watch (consent required), erased on request; settings and the list.
    const customer = { phone: '+919876543210', email: 'ravi@example.com', language: 'hi', channels: ['whatsapp', 'email'] };
    expectError(await call('POST', '/v1/trackings', { body: { carrier: 'delhivery', awb: awbFor('delhivery', 4), customer } }), 400, 'consent_required');
    expectError(await call('POST', '/v1/trackings', { body: { carrier: 'delhivery', awb: awbFor('delhivery', 4), customer: { phone: '123', consent: true } } }), 400, 'invalid_customer');
    const withContact = await call('POST', '/v1/trackings', { body: { carrier: 'delhivery', awb: awbFor('delhivery', 4), customer: { ...customer, consent: true } } });
    expect(withContact.statusCode, withContact.body).toBe(201);
    expect((await call('DELETE', `/v1/trackings/delhivery/${awbFor('delhivery', 4)}/customer`)).statusCode).toBe(204);
    expectError(await call('DELETE', `/v1/trackings/delhivery/${awbFor('delhivery', 5)}/customer`), 404, 'not_found');
    expect((await call('GET', '/v1/notices/settings')).statusCode).toBe(200);
    expect((await call('PUT', '/v1/notices/settings', { body: { events: ['delivered'], quiet_hours: null } })).statusCode).toBe(200);
    expectError(await call('PUT', '/v1/notices/settings', { body: { events: ['nope'] } }), 400, 'bad_request');
    expect((await call('GET', '/v1/notices?limit=5')).statusCode).toBe(200);
    expectError(await call('GET', '/v1/notices?carrier=delhivery'), 400, 'bad_request');

    const created = await call('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hooks', events: ['tracking.delivered'] } });
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as { id: string }).id;
    expect((await call('GET', '/v1/webhooks')).statusCode).toBe(200);
    expect((await call('GET', `/v1/webhooks/${id}`)).statusCode).toBe(200);
    expect((await call('POST', `/v1/webhooks/${id}/rotate-secret`)).statusCode).toBe(200);
    expect((await call('POST', `/v1/webhooks/${id}/enable`)).statusCode).toBe(200);
    expect((await call('POST', `/v1/webhooks/${id}/test`)).statusCode).toBe(202);
    expect((await call('GET', `/v1/webhooks/${id}/deliveries?limit=5`)).statusCode).toBe(200);
    expectError(await call('GET', `/v1/webhooks/${id}/deliveries?limit=0`), 400, 'bad_request');
    expectError(await call('POST', `/v1/webhooks/${id}/deliveries/evt_unknown/resend`), 404, 'not_found');
    expect((await call('DELETE', `/v1/webhooks/${id}`)).statusCode).toBe(204);
  });

  it('the branding with good and bad input, and without a key', async () => {
    expect((await call('GET', '/v1/branding')).statusCode).toBe(200);
    const put = (body: unknown, apiKey?: string | null) => h.app.inject({
      method: 'PUT', url: '/v1/branding', payload: body as object, headers: apiKey === null ? {} : { 'x-api-key': apiKey ?? key },
    });
    expect((await put({ name: 'Chai Point', accent_color: '#1a73e8' })).statusCode).toBe(200);
    expectError(await put({ name: 'Chai Point', logo: 'https://cdn.example.com/logo.png' }), 400, 'invalid_branding');
    expectError(await put({ name: 'Chai Point' }, null), 401, 'missing_api_key');
    // The logo, from the pages' own host: a watch's page and its order's, and a token that opens nothing.
    expect((await put({ name: 'Chai Point', logo: `data:image/png;base64,${pngOf().toString('base64')}` })).statusCode).toBe(200);
    const watched = await call('POST', '/v1/trackings', { body: { carrier: 'delhivery', awb: awbFor('delhivery', 2, 9), order_id: 'ORD-LOGO' } });
    const links = (watched.json() as { watch: { page_url: string; order_page_url: string } }).watch;
    for (const url of [links.page_url, links.order_page_url]) {
      const logo = await call('GET', `${new URL(url).pathname}/logo`, { apiKey: null });
      expect(logo.statusCode, url).toBe(200);
      expect(logo.headers['content-type']).toBe('image/png');
    }
    for (const path of ['/t/nonsense/logo', '/o/nonsense/logo']) expect((await call('GET', path, { apiKey: null })).statusCode).toBe(404);
  });

  it('management calls past the burst limit: 429 with Retry-After and the limit headers, declared', async () => {
    const slow = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 2 })).key;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call('GET', '/v1/webhooks', { apiKey: slow }));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 429]);
    expectError(answers[2]!, 429, 'rate_limit_exceeded');
    expect(answers[2]!.headers['retry-after']).toBe('1');
    expect(answers[2]!.headers['ratelimit-limit']).toBe('2');
  });

  it('a replayed batch carries the rate-limit headers the first answer had', async () => {
    const body = { items: [{ carrier: 'delhivery', awb: awbFor('delhivery', 2) }, { awb: 'x' }] };
    const headers = { 'idempotency-key': 'contract-replay-1' };
    const first = await call('POST', '/v1/track/batch', { body, headers });
    expect(first.statusCode, first.body).toBe(200);
    const again = await call('POST', '/v1/track/batch', { body, headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-lookups-remaining']) {
      expect(first.headers[name], name).toBeDefined();
      expect(again.headers[name], name).toBe(first.headers[name]);
    }
    expectError(await call('POST', '/v1/track/batch', { body: { items: [{ awb: awbFor('delhivery', 3) }] }, headers }), 422, 'idempotency_key_reused');
    expectError(await call('POST', '/v1/track/batch', { body: 'not json', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
  });

  it('lookups, carriers, usage and lanes with good and bad input', async () => {
    expect((await h.track(key, 'delhivery', awbFor('delhivery', 2))).statusCode).toBe(200);
    expectError(await h.track(key, 'delhivery', awbFor('delhivery', 0)), 404, 'shipment_not_found');
    expectError(await h.track(key, 'nosuchcarrier', '1234567890102'), 400, 'unsupported_carrier');
    expectError(await h.track(null, 'delhivery', '1234567890102'), 401, 'missing_api_key');
    expect((await call('GET', `/v1/track/${awbFor('delhivery', 2)}`)).statusCode).toBe(200);
    expectError(await call('GET', '/v1/track/x'), 400, 'invalid_awb');
    expect((await call('GET', '/v1/carriers', { apiKey: null })).statusCode).toBe(200);
    expect((await call('GET', `/v1/carriers/detect/${awbFor('delhivery', 2)}`)).statusCode).toBe(200);
    expect((await call('GET', '/v1/usage')).statusCode).toBe(200);
    await call('GET', '/v1/lanes/110001/400001');
    expectError(await call('GET', '/v1/lanes/1100/400001'), 400, 'invalid_pincode');
    expect((await call('GET', '/v1/estimate/110001/560001')).statusCode).toBe(200);
    expect((await call('GET', '/v1/estimate/110001/560001?ship_date=2026-11-20&carrier=delhivery&service_type=surface')).statusCode).toBe(200);
    expectError(await call('GET', '/v1/estimate/11000/560001'), 400, 'invalid_pincode');
    expectError(await call('GET', '/v1/estimate/110001/560001?ship_date=2026-02-30'), 400, 'invalid_date');
    expectError(await call('GET', '/v1/estimate/110001/560001?carrier=nosuchcarrier'), 400, 'unsupported_carrier');
    expect((await call('GET', '/healthz', { apiKey: null })).statusCode).toBe(200);
    await call('GET', '/readyz', { apiKey: null });
  });

  it('the analyzer with good and bad input', async () => {
    const accepted = await call('POST', '/v1/analyses', { body: { name: 'contract', shipments: [{ awb: awbFor('delhivery', 2), carrier: 'delhivery' }] } });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const id = (accepted.json() as { id: string }).id;
    expectError(await call('POST', '/v1/analyses', { body: { shipments: [] } }), 400, 'invalid_analysis');
    expect((await call('GET', '/v1/analyses')).statusCode).toBe(200);
    expect((await call('GET', `/v1/analyses/${id}`)).statusCode).toBe(200);
    await call('GET', `/v1/analyses/${id}/shipments`);
    const shared = await call('POST', `/v1/analyses/${id}/share`);
    expect(shared.statusCode).toBe(200);
    expect((await call('GET', new URL((shared.json() as { url: string }).url).pathname, { apiKey: null })).statusCode).toBe(200);
    expectError(await call('GET', '/shared/analyses/nonsense', { apiKey: null }), 404, 'analysis_not_found');
    expect((await call('DELETE', `/v1/analyses/${id}/share`)).statusCode).toBe(204);
    expectError(await call('DELETE', '/v1/analyses/an_unknown/share'), 404, 'analysis_not_found');
    expectError(await call('GET', '/v1/analyses/an_unknown'), 404, 'analysis_not_found');
  });

  it('the admin API with good and bad input', async () => {
    expectError(await h.app.inject({ method: 'POST', url: '/admin/keys', payload: {} }), 401, 'unauthorized');
    expectError(await h.admin('POST', '/admin/keys', { plan: 'nope' }), 400, 'bad_request');
    expect((await h.admin('GET', `/admin/keys/${prefix}`)).statusCode).toBe(200);
    expectError(await h.admin('GET', '/admin/keys/trk_test_ZZZZZZZ'), 404, 'not_found');
    const other = (await h.createKey()).key_prefix;
    for (const action of ['suspend', 'resume', 'renew', 'revoke']) expect((await h.admin('POST', `/admin/keys/${other}/${action}`)).statusCode).toBe(200);
    expect((await h.admin('GET', `/admin/payments?key=${prefix}`)).statusCode).toBe(200);
    expectError(await h.admin('GET', '/admin/payments'), 400, 'bad_request');
    const docs = await h.app.inject({ method: 'GET', url: '/admin/openapi.json', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(docs.statusCode).toBe(200);
  });

  it('every operation of both documents was answered here, and every answer matches its document', async () => {
    const { public: pub, admin } = h.app.apiDocuments() as unknown as { public: Doc; admin: Doc };
    const operations = [pub, admin].flatMap((doc) => Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)));
    const answered = new Set(h.answers.filter((a) => a.route).map((a) => `${a.method} ${openApiPath(a.route!)}`));
    expect(operations.filter((op) => !answered.has(op))).toEqual([]);
    expect(await h.answerMismatches()).toEqual([]);
  });
});
