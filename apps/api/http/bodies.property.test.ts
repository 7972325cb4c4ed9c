/**
 * Arbitrary JSON at every `/v1/` route that takes a body, with and without a valid key: never a
 * 5xx, always the standard error body on a 4xx (issue 20: `{"carrier": {"toString": 1}}` gave 500).
 * Bodies are any JSON at all, objects with the routes' own field names holding any JSON, and text
 * that is not JSON.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';

let h: ApiHarness;
let key: string;
let endpointId: string;

beforeAll(async () => {
  h = await startApiHarness();
  key = (await h.createKey({ plan: 'business', mode: 'test', burst_per_second: 1_000_000, daily_quota: 1_000_000, lookups_limit: 1_000_000 })).key;
  const created = await h.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: 'http://127.0.0.1:9/hook' } });
  expect(created.statusCode, created.body).toBe(201);
  endpointId = (created.json() as { id: string }).id;
});
afterAll(async () => {
  await h?.close();
});

/** Any JSON value, and objects whose keys are the routes' field names (so values reach the schemas). */
const fieldNames = fc.constantFrom('carrier', 'awb', 'items', 'url', 'events', 'description', 'name', 'shipments', '__proto__', 'constructor', 'toString');
const nearShape: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.jsonValue(), tie('object'), fc.array(tie('object'), { maxLength: 4 })),
  object: fc.dictionary(fieldNames, tie('value'), { maxKeys: 4 }),
})).value;
const json = fc.oneof(fc.jsonValue(), nearShape, fc.record({ items: fc.array(nearShape, { maxLength: 5 }) }));
/** Mostly JSON; sometimes any text at all (not JSON: refused after the key checks too). */
const body = fc.oneof({ arbitrary: json.map((value) => JSON.stringify(value) ?? 'null'), weight: 4 }, { arbitrary: fc.string(), weight: 1 });

const ROUTES: [string, () => string][] = [
  ['/v1/trackings', () => '/v1/trackings'],
  ['/v1/track/batch', () => '/v1/track/batch'],
  ['/v1/webhooks', () => '/v1/webhooks'],
  ['/v1/webhooks/{id}/rotate-secret', () => `/v1/webhooks/${endpointId}/rotate-secret`],
  ['/v1/webhooks/{id}/test', () => `/v1/webhooks/${endpointId}/test`],
];

describe('every /v1/ body-taking route, arbitrary JSON bodies', () => {
  for (const [name, route] of ROUTES) {
    it(`POST ${name}: never 5xx, 4xx in the standard error body`, async () => {
      await fc.assert(fc.asyncProperty(body, fc.boolean(), async (payload, withKey) => {
        const res = await h.app.inject({
          method: 'POST', url: route(),
          headers: { 'content-type': 'application/json', ...(withKey ? { 'x-api-key': key } : {}) },
          payload,
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        if (res.statusCode >= 400) {
          expect(res.json()).toMatchObject({ error: { code: expect.any(String), message: expect.any(String), request_id: expect.any(String) } });
        }
        if (!withKey) expect(res.statusCode).toBe(401);
      }), { numRuns: 150 });
    });
  }
});
