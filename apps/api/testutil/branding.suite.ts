/**
 * PUT and GET /v1/branding through the real runtime, on the embedded store (branding.test.ts) and
 * on Redis (branding.services.test.ts): each key reads and changes its own branding only, a refused
 * body changes nothing, and the branding survives a restart.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_BRANDING, parseBranding } from '../../../lib/branding/index.ts';
import { dataUrl, jpegOf, pngOf } from '../../../lib/branding/testutil/images.ts';
import { expectError, startApiHarness, type ApiHarness, type StoreKind } from './harness.ts';

const BRANDING = {
  name: 'Chai Point', accent_color: '#1A73E8', logo: dataUrl('image/png', pngOf()), support_url: 'https://chaipoint.example.com/help',
  mask_awb: true, frame_ancestors: ['https://chaipoint.example.com', 'http://localhost:5173'],
};
/** BRANDING as stored: the colour in lower case, the rest as sent. */
const STORED = { ...BRANDING, accent_color: '#1a73e8' };

export function brandingSuite(store: StoreKind): void {
  describe(`/v1/branding (${store} store)`, () => {
    let h: ApiHarness;
    let key: string;
    let prefix: string;

    beforeEach(async () => {
      h = await startApiHarness({ store });
      ({ key, key_prefix: prefix } = await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 }));
    });
    afterEach(() => h.close());

    const get = (apiKey: string | null = key) => h.app.inject({ method: 'GET', url: '/v1/branding', headers: apiKey ? { 'x-api-key': apiKey } : {} });
    const put = (body: unknown, apiKey = key) => h.app.inject({
      method: 'PUT', url: '/v1/branding', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const ok = (res: LightMyRequestResponse) => {
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Record<string, unknown>;
    };

    it('answers the defaults until a branding is set, then the branding as stored, after a restart too; no lookup is consumed', async () => {
      expect(ok(await get())).toEqual(DEFAULT_BRANDING);
      expect(ok(await put(BRANDING))).toEqual(STORED);
      expect(ok(await get())).toEqual(STORED);
      const jpeg = { name: '  Chai Point  ', logo: dataUrl('image/jpeg', jpegOf()) };
      // A PUT replaces the whole branding: what it leaves out is back to its default.
      const replaced = { ...DEFAULT_BRANDING, name: 'Chai Point', logo: jpeg.logo };
      expect(ok(await put(jpeg))).toEqual(replaced);
      await h.restart();
      expect(ok(await get())).toEqual(replaced);
      expect((await h.usage(key)).period.lookups_used).toBe(0);
      // The store is the one the page will read, under DATA_DIR/branding or Redis `<namespace>branding:`.
      expect(await h.deps.branding!.get(prefix)).toEqual(replaced);
    });

    it('one key cannot read or change another key\'s branding', async () => {
      const other = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 })).key;
      ok(await put(BRANDING));
      expect(ok(await get(other))).toEqual(DEFAULT_BRANDING);
      expect(ok(await put({ name: 'Other Shop' }, other))).toEqual({ ...DEFAULT_BRANDING, name: 'Other Shop' });
      expect(ok(await get())).toEqual(STORED);
      expect(ok(await get(other))).toEqual({ ...DEFAULT_BRANDING, name: 'Other Shop' });
      // Nothing in the request picks the key's document: a query or header naming another key's prefix changes nothing.
      const otherPrefix = other.slice(0, 'trk_test_'.length + 7);
      const res = await h.app.inject({ method: 'GET', url: `/v1/branding?prefix=${otherPrefix}&key_prefix=${otherPrefix}`, headers: { 'x-api-key': key } });
      expect(ok(res)).toEqual(STORED);
    });

    it('refuses an SVG, a remote URL, an oversized image and other bad input with 400 invalid_branding, and nothing stored changes', async () => {
      ok(await put(BRANDING));
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
      const oversized = pngOf(1, 1, [0, 0, 0], 61_440 - pngOf(1, 1, [0, 0, 0], 0).length - 12);
      const refusals: [unknown, string][] = [
        [{ ...BRANDING, logo: dataUrl('image/svg+xml', svg) }, 'The branding was not saved (a problem): logo: SVG is not accepted; PNG or JPEG only.'],
        [{ ...BRANDING, logo: 'https://cdn.example.com/logo.png' }, 'logo: a remote URL is not accepted'],
        [{ ...BRANDING, logo: dataUrl('image/png', oversized) }, 'logo: 61,440 bytes decoded; at most 51,200.'],
        [{ ...BRANDING, logo: dataUrl('image/png', jpegOf()) }, 'logo: the bytes are a JPEG image, but the data URL declares image/png'],
        [{ ...BRANDING, frame_ancestors: ['https://*.example.com'] }, 'frame_ancestors[0]: wildcards are not accepted'],
        [{ name: 'x'.repeat(61), accent_color: 'blue' }, '(2 problems): name: 61 characters; at most 60. accent_color: must be #rrggbb'],
        [{ ...BRANDING, colour: '#000000' }, '"colour": not a branding field'],
        [[BRANDING], 'the body: must be a JSON object'],
      ];
      for (const [body, message] of refusals) {
        const error = expectError(await put(body), 400, 'invalid_branding');
        expect(error.message).toContain(message);
        expect(ok(await get())).toEqual(STORED);
      }
      expectError(await put('{"name": "Chai'), 400, 'bad_request');
      expect(ok(await get())).toEqual(STORED);
    });

    it('a body over 96 KiB: 413, and nothing stored changes', async () => {
      ok(await put(BRANDING));
      const huge = { ...BRANDING, logo: dataUrl('image/png', pngOf(1, 1, [0, 0, 0], 80 * 1024)) };
      const error = expectError(await put(huge), 413, 'payload_too_large');
      expect(error.message).toContain('96 KiB');
      expect(ok(await get())).toEqual(STORED);
    });

    it('without a key 401; a revoked key 401 as on every route, its branding unchanged; other methods 405', async () => {
      expectError(await get(null), 401, 'missing_api_key');
      ok(await put(BRANDING));
      expect((await h.admin('POST', `/admin/keys/${prefix}/revoke`)).statusCode).toBe(200);
      expectError(await get(), 401, 'invalid_api_key');
      expectError(await put({ name: 'Taken over' }), 401, 'invalid_api_key');
      expect(await h.deps.branding!.get(prefix)).toEqual(STORED);
      const deleted = await h.app.inject({ method: 'DELETE', url: '/v1/branding', headers: { 'x-api-key': key } });
      expectError(deleted, 405, 'method_not_allowed');
      expect(deleted.headers.allow).toBe('GET, PUT');
    });

    it('the OpenAPI example is a branding the route accepts', async () => {
      const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
        paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example: unknown }> } }>>;
      };
      const example = doc.paths['/v1/branding']!.put!.requestBody!.content['application/json']!.example;
      expect(parseBranding(example).ok).toBe(true);
      expect(ok(await put(example))).toEqual(example);
    });
  });
}
