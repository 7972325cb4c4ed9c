/**
 * Share links of analyses (issue 29, findings 6 and 7) on both state stores: a link names neither
 * the key nor the analysis, can be revoked, is dead while its key is suspended or once revoked, and
 * its address comes from PUBLIC_BASE_URL (else where the API listens), never the Host header.
 */
import { Buffer } from 'node:buffer';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnalysisSchema, ShareLinkSchema } from '../../../lib/analyzer/index.ts';
import { waitFor } from './analyses.suite.ts';
import { DAY_MS, expectError, startApiHarness, type ApiHarness, type StoreKind } from './harness.ts';

const PUBLIC = 'https://track.example.in';

export function analysesShareSuite(store: StoreKind): void {
  describe(`share links of analyses (${store} store)`, () => {
    let h: ApiHarness;
    let key: string;
    let prefix: string;
    let id: string;

    beforeEach(async () => {
      h = await startApiHarness({ store, env: { PUBLIC_BASE_URL: `${PUBLIC}/` } });
      const created = await h.createKey({ plan: 'growth', mode: 'test', burst_per_second: 1000 });
      key = created.key;
      prefix = created.key_prefix;
      const posted = await h.app.inject({ method: 'POST', url: '/v1/analyses', headers: { 'x-api-key': key }, payload: { name: 'shared', shipments: [{ awb: '1234567000104', carrier: 'delhivery' }] } });
      expect(posted.statusCode, posted.body).toBe(202);
      id = (posted.json() as { id: string }).id;
      await waitFor(async () => AnalysisSchema.parse((await h.app.inject({ method: 'GET', url: `/v1/analyses/${id}`, headers: { 'x-api-key': key } })).json()), (v) => v.status === 'completed');
    });
    afterEach(async () => {
      await h.close();
    });

    const share = async (headers: Record<string, string> = {}) => {
      const res = await h.app.inject({ method: 'POST', url: `/v1/analyses/${id}/share`, headers: { 'x-api-key': key, ...headers } });
      expect(res.statusCode, res.body).toBe(200);
      return ShareLinkSchema.parse(res.json());
    };
    const view = (url: string) => h.app.inject({ method: 'GET', url: new URL(url).pathname });
    const admin = async (action: string) => expect((await h.admin('POST', `/admin/keys/${prefix}/${action}`)).statusCode).toBe(200);

    it('the link is built on PUBLIC_BASE_URL whatever Host the request names (finding 7), and names neither key nor analysis', async () => {
      const link = await share({ host: 'evil.example', 'x-forwarded-host': 'evil.example' });
      expect(link.url.startsWith(`${PUBLIC}/shared/analyses/`)).toBe(true);
      expect(link.url).not.toContain('evil.example');
      const token = link.url.slice(`${PUBLIC}/shared/analyses/`.length);
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      for (const text of [token, Buffer.from(token, 'base64url').toString('latin1')]) {
        expect(text).not.toContain(prefix);
        expect(text).not.toContain(prefix.slice('trk_test_'.length));
        expect(text).not.toContain(id);
      }
      expect((await view(link.url)).statusCode).toBe(200);
      expect(Date.parse(link.expires_at)).toBe(Math.floor((h.clock.now() + 30 * DAY_MS) / 1000) * 1000);
    });

    it('is dead while the key is suspended, back on resume, and dead for good once the key is revoked (finding 6)', async () => {
      const link = await share();
      expect((await view(link.url)).statusCode).toBe(200);
      await admin('suspend');
      const suspended = await view(link.url);
      expectError(suspended, 404, 'analysis_not_found');
      expect(suspended.body).not.toContain('shared');
      await admin('resume');
      expect((await view(link.url)).statusCode).toBe(200);
      await admin('revoke');
      expectError(await view(link.url), 404, 'analysis_not_found');
    });

    it('DELETE /v1/analyses/{id}/share revokes every link made so far; a link made afterwards works; another key cannot', async () => {
      const [first, second] = [await share(), await share()];
      const other = await h.createKey({ plan: 'business', mode: 'test' });
      expectError(await h.app.inject({ method: 'DELETE', url: `/v1/analyses/${id}/share`, headers: { 'x-api-key': other.key } }), 404, 'analysis_not_found');
      expect((await view(first.url)).statusCode).toBe(200);

      const revoked = await h.app.inject({ method: 'DELETE', url: `/v1/analyses/${id}/share`, headers: { 'x-api-key': key } });
      expect(revoked.statusCode).toBe(204);
      for (const link of [first, second]) expectError(await view(link.url), 404, 'analysis_not_found');
      const third = await share();
      expect((await view(third.url)).statusCode).toBe(200);
      expectError(await view(first.url), 404, 'analysis_not_found');

      const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId?: string }>> };
      expect(doc.paths['/v1/analyses/{id}/share']!.delete!.operationId).toBe('revokeAnalysisShares');
    });

    it('expires after 30 days; a made-up or old-style signed token opens nothing', async () => {
      const link = await share();
      h.clock.advance(30 * DAY_MS);
      expectError(await view(link.url), 404, 'analysis_not_found');
      const oldStyle = `${Buffer.from(`${prefix}.${id}.9999999999`).toString('base64url')}.c2lnbmF0dXJl`;
      for (const token of [oldStyle, 'A'.repeat(32), 'nonsense']) expectError(await h.app.inject({ method: 'GET', url: `/shared/analyses/${token}` }), 404, 'analysis_not_found');
    });
  });

  describe(`share links without PUBLIC_BASE_URL (${store} store)`, () => {
    let h: ApiHarness;
    afterEach(async () => {
      await h?.close();
    });

    it('are built on the address the API listens on, never the Host header (finding 7)', async () => {
      h = await startApiHarness({ store });
      const base = await h.listen();
      const created = await h.createKey({ plan: 'growth', mode: 'test' });
      const posted = await fetch(`${base}/v1/analyses`, {
        method: 'POST', headers: { 'x-api-key': created.key, 'content-type': 'application/json' },
        body: JSON.stringify({ shipments: [{ awb: '1234567000204', carrier: 'delhivery' }] }),
      });
      const { id } = await posted.json() as { id: string };
      // fetch does not let a caller set Host; undici's request sends the one given.
      const res = await request(`${base}/v1/analyses/${id}/share`, { method: 'POST', headers: { 'x-api-key': created.key, host: 'evil.example' } });
      expect(res.statusCode).toBe(200);
      const link = ShareLinkSchema.parse(await res.body.json());
      expect(link.url.startsWith(`${base}/shared/analyses/`)).toBe(true);
      expect((await fetch(link.url)).status).toBe(200);
    });
  });
}
