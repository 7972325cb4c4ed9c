/** The admin API (contracts.md "Admin API") through app.inject(), on the embedded runtime. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../../lib/access/index.ts';
import { UsageRecordSchema } from '../../../lib/schemas/index.ts';
import { ADMIN_TOKEN, DAY_MS, expectError, expectUsage, startApiHarness, type ApiHarness, type CreatedKeyView } from '../testutil/harness.ts';

const UNKNOWN_PREFIX = 'trk_test_0000000';

/** The usage record plus e-mail and mode, and nothing else (never the key or its hash). */
const KeyViewSchema = UsageRecordSchema.extend({ email: UsageRecordSchema.shape.key_prefix, mode: UsageRecordSchema.shape.key_prefix }).strict();

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...await filesUnder(path));
    else out.push(path);
  }
  return out;
}

describe('admin API', () => {
  let h: ApiHarness;
  beforeAll(async () => { h = await startApiHarness(); });
  afterAll(() => h.close());

  describe('authentication', () => {
    it.each([
      ['no Authorization header', undefined],
      ['an empty bearer', 'Bearer '],
      ['a wrong token', 'Bearer not-the-admin-token-at-all'],
      ['the token with one character more', `Bearer ${ADMIN_TOKEN}x`],
      ['the token cut short', `Bearer ${ADMIN_TOKEN.slice(0, -1)}`],
      ['another scheme', `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`],
      ['the token without a scheme', ADMIN_TOKEN],
    ])('401 unauthorized with %s', async (name, authorization) => {
      const headers = authorization === undefined ? {} : { authorization };
      // Each case from an address of its own: wrong tokens are throttled per address (hostile.test.ts).
      const remoteAddress = `192.0.2.${name.length}`;
      for (const [method, url] of [['POST', '/admin/keys'], ['GET', `/admin/keys/${UNKNOWN_PREFIX}`], ['POST', `/admin/keys/${UNKNOWN_PREFIX}/revoke`]] as const) {
        const res = await h.app.inject({ method, url, headers, remoteAddress, payload: { plan: 'starter', mode: 'test', email: 'a@example.com' } });
        const error = expectError(res, 401, 'unauthorized');
        expect(error.message).toContain('Bearer');
      }
    });

    it('authenticates before reading the body: no token and a bad body is still 401', async () => {
      const res = await h.app.inject({ method: 'POST', url: '/admin/keys', headers: { 'content-type': 'application/json' }, payload: '{not json' });
      expectError(res, 401, 'unauthorized');
    });

    it('API keys do not open the admin API', async () => {
      const k = await h.createKey();
      const res = await h.app.inject({ method: 'GET', url: `/admin/keys/${k.key_prefix}`, headers: { 'x-api-key': k.key, authorization: `Bearer ${k.key}` } });
      expectError(res, 401, 'unauthorized');
    });

    it('accepts the scheme in any case', async () => {
      const res = await h.app.inject({ method: 'GET', url: `/admin/keys/${UNKNOWN_PREFIX}`, headers: { authorization: `bearer ${ADMIN_TOKEN}` } });
      expectError(res, 404, 'not_found');
    });
  });

  describe('POST /admin/keys', () => {
    it('201 with the full key (once), a 16-character prefix and the plan defaults', async () => {
      const res = await h.admin('POST', '/admin/keys', { plan: 'growth', mode: 'live', email: 'ops@example.com' });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['x-request-id']).toMatch(/^req_/);
      const body = res.json() as CreatedKeyView;
      expect(body.key).toMatch(/^trk_live_[A-Za-z0-9]{32}$/);
      expect(body.key_prefix).toHaveLength(16);
      expect(body.key_prefix).toBe(body.key.slice(0, 16));
      expect(body).toEqual({
        key: body.key,
        key_prefix: body.key_prefix,
        plan: 'growth',
        status: 'active',
        email: 'ops@example.com',
        mode: 'live',
        period: { start: h.clock.iso(), end: h.clock.iso(30 * DAY_MS), lookups_used: 0, lookups_limit: 4000, lookups_remaining: 4000 },
        rate_limits: { burst_per_second: 10, daily_quota: 800 },
      });
      // The key works at once.
      expect((await h.usage(body.key)).key_prefix).toBe(body.key_prefix);
    });

    it('test-mode keys start with trk_test_; two keys never share a prefix', async () => {
      const a = await h.createKey({ mode: 'test' });
      const b = await h.createKey({ mode: 'test' });
      expect(a.key).toMatch(/^trk_test_[A-Za-z0-9]{32}$/);
      expect(a.key_prefix).not.toBe(b.key_prefix);
    });

    it('overrides: limits and an explicit period (any offset, stored as UTC)', async () => {
      const k = await h.createKey({
        plan: 'starter', lookups_limit: 50, daily_quota: 7, burst_per_second: 3,
        period_start: '2026-11-01T10:00:00+05:30', period_end: '2026-12-01T10:00:00+05:30',
      });
      expect(k.period).toEqual({ start: '2026-11-01T04:30:00.000Z', end: '2026-12-01T04:30:00.000Z', lookups_used: 0, lookups_limit: 50, lookups_remaining: 50 });
      expect(k.rate_limits).toEqual({ burst_per_second: 3, daily_quota: 7 });
      expect(await h.usage(k.key)).toMatchObject({ plan: 'starter', period: { lookups_limit: 50 }, rate_limits: { burst_per_second: 3, daily_quota: 7 } });
    });

    it('only a hash of the key is stored', async () => {
      const k = await h.createKey();
      for (const file of await filesUnder(h.dataDir)) {
        expect(await readFile(file, 'utf8'), file).not.toContain(k.key);
      }
    });

    it.each([
      ['an unknown plan', { plan: 'platinum', mode: 'test', email: 'a@example.com' }, 'plan'],
      ['a missing plan', { mode: 'test', email: 'a@example.com' }, 'plan'],
      ['an unknown mode', { plan: 'starter', mode: 'prod', email: 'a@example.com' }, 'mode'],
      ['a bad e-mail', { plan: 'starter', mode: 'test', email: 'not-an-email' }, 'email'],
      ['a missing e-mail', { plan: 'starter', mode: 'test' }, 'email'],
      ['an extra field', { plan: 'starter', mode: 'test', email: 'a@example.com', discount: 50 }, 'discount'],
      ['a zero limit', { plan: 'starter', mode: 'test', email: 'a@example.com', lookups_limit: 0 }, 'lookups_limit'],
      ['a fractional burst', { plan: 'starter', mode: 'test', email: 'a@example.com', burst_per_second: 1.5 }, 'burst_per_second'],
      ['a limit as a string', { plan: 'starter', mode: 'test', email: 'a@example.com', daily_quota: '10' }, 'daily_quota'],
      ['a date without an offset', { plan: 'starter', mode: 'test', email: 'a@example.com', period_start: '2026-11-01 10:00' }, 'period_start'],
      ['an end before the start', { plan: 'starter', mode: 'test', email: 'a@example.com', period_start: '2026-11-10T00:00:00Z', period_end: '2026-11-01T00:00:00Z' }, 'period_end'],
      ['a JSON array', [], 'body'],
    ])('400 bad_request for %s, naming what is wrong', async (_name, body, mentioned) => {
      const error = expectError(await h.admin('POST', '/admin/keys', body), 400, 'bad_request');
      expect(error.message).toContain(mentioned);
    });

    it('400 bad_request for invalid JSON and for a missing body', async () => {
      const invalid = await h.app.inject({
        method: 'POST', url: '/admin/keys',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        payload: '{"plan": "starter",',
      });
      expect(expectError(invalid, 400, 'bad_request').message).toMatch(/JSON/i);
      const missing = expectError(await h.admin('POST', '/admin/keys'), 400, 'bad_request');
      expect(missing.message).toContain('plan');
    });

    it('415 unsupported_media_type for a body that is not JSON (contracts.md: JSON in)', async () => {
      const res = await h.app.inject({
        method: 'POST', url: '/admin/keys',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/plain' },
        payload: 'plan=starter',
      });
      expectError(res, 415, 'unsupported_media_type');
    });
  });

  describe('GET /admin/keys/:prefix', () => {
    it('the usage record plus e-mail and mode; never the key or its hash', async () => {
      const k = await h.createKey({ plan: 'business', mode: 'live', email: 'Big.Customer@Example.com' });
      const res = await h.admin('GET', `/admin/keys/${k.key_prefix}`);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain(k.key);
      expect(res.body).not.toContain(hashKey(k.key));
      const parsed = KeyViewSchema.safeParse(res.json());
      expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
      expect(res.json()).toEqual({
        key_prefix: k.key_prefix,
        plan: 'business',
        status: 'active',
        period: { start: h.clock.iso(), end: h.clock.iso(30 * DAY_MS), lookups_used: 0, lookups_limit: 12_000, lookups_remaining: 12_000 },
        rate_limits: { burst_per_second: 20, daily_quota: 2400 },
        // Business includes the shipment analyzer: its own allowance (contracts.md).
        analyzer: { shipments_used: 0, shipments_limit: 12_000 },
        email: 'Big.Customer@Example.com',
        mode: 'live',
      });
    });

    it('reports the lookups used', async () => {
      const k = await h.createKey();
      await h.track(k.key, 'delhivery', '1234567890102');
      await h.track(k.key, 'delhivery', '1234567890100');
      expect((await h.admin('GET', `/admin/keys/${k.key_prefix}`)).json()).toMatchObject({ period: { lookups_used: 2, lookups_remaining: 1498 } });
    });

    it('404 not_found for an unknown prefix, 400 bad_request for a malformed one', async () => {
      expectError(await h.admin('GET', `/admin/keys/${UNKNOWN_PREFIX}`), 404, 'not_found');
      const k = await h.createKey();
      // A full key is not a prefix: refusing it keeps keys out of admin URLs (and logs).
      for (const bad of ['abc', 'trk_test_', 'trk_prod_0000000', 'trk_test_00000000', 'trk_test_000-000', k.key]) {
        const error = expectError(await h.admin('GET', `/admin/keys/${encodeURIComponent(bad)}`), 400, 'bad_request');
        expect(error.message).toContain('prefix');
        expect(error.message).not.toContain(k.key);
      }
    });
  });

  describe('suspend, resume, revoke', () => {
    it('each answers 200 with the new status, and the key view shows it', async () => {
      const k = await h.createKey();
      const suspend = await h.admin('POST', `/admin/keys/${k.key_prefix}/suspend`);
      expect(suspend.statusCode).toBe(200);
      expect(suspend.json()).toMatchObject({ key_prefix: k.key_prefix, status: 'suspended' });
      expect(KeyViewSchema.safeParse(suspend.json()).success).toBe(true);
      // Suspending twice is harmless.
      expect((await h.admin('POST', `/admin/keys/${k.key_prefix}/suspend`)).json()).toMatchObject({ status: 'suspended' });

      const resume = await h.admin('POST', `/admin/keys/${k.key_prefix}/resume`);
      expect(resume.statusCode).toBe(200);
      expect(resume.json()).toMatchObject({ status: 'active' });

      const revoke = await h.admin('POST', `/admin/keys/${k.key_prefix}/revoke`);
      expect(revoke.statusCode).toBe(200);
      expect(revoke.json()).toMatchObject({ status: 'revoked' });
      expect((await h.admin('GET', `/admin/keys/${k.key_prefix}`)).json()).toMatchObject({ status: 'revoked' });
    });

    it('revoked is final: resume, suspend and renew answer 409 conflict; revoking again is a no-op', async () => {
      const k = await h.createKey();
      await h.admin('POST', `/admin/keys/${k.key_prefix}/revoke`);
      expect(expectError(await h.admin('POST', `/admin/keys/${k.key_prefix}/resume`), 409, 'conflict').message).toContain('revoked');
      expectError(await h.admin('POST', `/admin/keys/${k.key_prefix}/suspend`), 409, 'conflict');
      expectError(await h.admin('POST', `/admin/keys/${k.key_prefix}/renew`, {}), 409, 'conflict');
      const again = await h.admin('POST', `/admin/keys/${k.key_prefix}/revoke`);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({ status: 'revoked' });
    });

    it.each(['suspend', 'resume', 'revoke', 'renew'])('%s: 404 for an unknown prefix, 400 for a malformed one', async (action) => {
      expectError(await h.admin('POST', `/admin/keys/${UNKNOWN_PREFIX}/${action}`, {}), 404, 'not_found');
      expectError(await h.admin('POST', `/admin/keys/nonsense/${action}`, {}), 400, 'bad_request');
    });

    it('a wrong method is 405 method_not_allowed with Allow, and changes nothing', async () => {
      const k = await h.createKey();
      for (const [method, url, allow] of [
        ['GET', `/admin/keys/${k.key_prefix}/revoke`, 'POST'],
        ['GET', '/admin/keys', 'POST'],
        ['DELETE', `/admin/keys/${k.key_prefix}`, 'GET'],
        ['PUT', `/admin/keys/${k.key_prefix}/renew`, 'POST'],
      ] as const) {
        const res = await h.app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expectError(res, 405, 'method_not_allowed');
        expect(res.headers.allow).toBe(allow);
      }
      expect((await h.admin('GET', `/admin/keys/${k.key_prefix}`)).json()).toMatchObject({ status: 'active' });
      // Without the token the admin API says nothing about its routes.
      expectError(await h.app.inject({ method: 'DELETE', url: `/admin/keys/${k.key_prefix}` }), 401, 'unauthorized');
    });
  });

  describe('POST /admin/keys/:prefix/renew', () => {
    it('without a plan: a new period from now, counters at zero, custom limits kept, status kept', async () => {
      const k = await h.createKey({ plan: 'starter', lookups_limit: 40, daily_quota: 9, burst_per_second: 4, period_start: h.clock.iso(-10 * DAY_MS), period_end: h.clock.iso(DAY_MS) });
      await h.track(k.key, 'delhivery', '1234567890102');
      await h.admin('POST', `/admin/keys/${k.key_prefix}/suspend`);
      h.clock.advance(2 * DAY_MS);
      const res = await h.admin('POST', `/admin/keys/${k.key_prefix}/renew`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        key_prefix: k.key_prefix,
        plan: 'starter',
        status: 'suspended',
        period: { start: h.clock.iso(), end: h.clock.iso(30 * DAY_MS), lookups_used: 0, lookups_limit: 40, lookups_remaining: 40 },
        rate_limits: { burst_per_second: 4, daily_quota: 9 },
        email: k.email,
        mode: 'test',
      });
    });

    it('with a plan: that plan\'s limits and validity', async () => {
      const k = await h.createKey({ plan: 'starter', lookups_limit: 40 });
      h.clock.advance(1000);
      const res = await h.admin('POST', `/admin/keys/${k.key_prefix}/renew`, { plan: 'trial' });
      expect(res.statusCode).toBe(200);
      expect(expectUsage(res.json())).toMatchObject({
        plan: 'trial',
        status: 'active',
        period: { start: h.clock.iso(), end: h.clock.iso(14 * DAY_MS), lookups_used: 0, lookups_limit: 100 },
        rate_limits: { burst_per_second: 5, daily_quota: 100 },
      });
    });

    it.each([
      ['an unknown plan', { plan: 'gold' }, 'plan'],
      ['an extra field', { plan: 'growth', months: 3 }, 'months'],
    ])('400 bad_request for %s', async (_name, body, mentioned) => {
      const k = await h.createKey();
      const error = expectError(await h.admin('POST', `/admin/keys/${k.key_prefix}/renew`, body), 400, 'bad_request');
      expect(error.message).toContain(mentioned);
      expect((await h.admin('GET', `/admin/keys/${k.key_prefix}`)).json()).toMatchObject({ plan: 'starter' });
    });

    it('400 bad_request for invalid JSON', async () => {
      const k = await h.createKey();
      const res = await h.app.inject({
        method: 'POST', url: `/admin/keys/${k.key_prefix}/renew`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        payload: '{plan: growth}',
      });
      expectError(res, 400, 'bad_request');
    });
  });
});
