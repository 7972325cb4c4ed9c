/** The self-serve trial page (contracts.md): an HTML form; one trial key per e-mail, shown once. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, startApiHarness, type ApiHarness } from './testing.ts';

function post(h: ApiHarness, email: string | null, remoteAddress = '203.0.113.7') {
  return h.app.inject({
    method: 'POST', url: '/trial', remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: email === null ? '' : new URLSearchParams({ email }).toString(),
  });
}

function keyOnPage(html: string): string {
  const match = /<code id="api-key">(trk_(?:live|test)_[A-Za-z0-9]{32})<\/code>/.exec(html);
  expect(match, html).not.toBeNull();
  return match![1]!;
}

describe('trial page', () => {
  let h: ApiHarness;
  beforeEach(async () => { h = await startApiHarness(); });
  afterEach(() => h.close());

  it('GET /trial is an HTML page with an e-mail form posting to /trial', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/trial' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toMatch(/^<!doctype html>/i);
    expect(res.body).toMatch(/<form method="post" action="\/trial">/);
    expect(res.body).toMatch(/<input[^>]+name="email"[^>]+type="email"/);
    expect(res.body).not.toMatch(/trk_(live|test)_/);
  });

  it('POST issues a trial key shown once on the page; the key works on /v1/usage', async () => {
    const res = await post(h, 'new.user@example.com');
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const key = keyOnPage(res.body);
    expect(res.body).toContain('shown once');
    const usage = await h.usage(key);
    expect(usage).toEqual({
      key_prefix: key.slice(0, 16),
      plan: 'trial',
      status: 'active',
      period: { start: h.clock.iso(), end: h.clock.iso(14 * DAY_MS), lookups_used: 0, lookups_limit: 100, lookups_remaining: 100 },
      rate_limits: { burst_per_second: 5, daily_quota: 100 },
    });
    // The operators see the key by its prefix only.
    const view = await h.admin('GET', `/admin/keys/${key.slice(0, 16)}`);
    expect(view.json()).toMatchObject({ email: 'new.user@example.com', plan: 'trial' });
    expect(view.body).not.toContain(key);
  });

  it('the same e-mail again (any case, surrounding spaces) → 409 page, no second key', async () => {
    keyOnPage((await post(h, 'Same.Person@example.com')).body);
    for (const again of ['Same.Person@example.com', 'same.person@EXAMPLE.com', '  same.person@example.com ']) {
      const res = await post(h, again);
      expect(res.statusCode).toBe(409);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('already issued');
      expect(res.body).not.toMatch(/trk_(live|test)_/);
    }
  });

  it.each([
    ['not an address', 'not-an-email'],
    ['no domain', 'someone@'],
    ['empty', ''],
    ['markup', '<script>alert(1)</script>@example.com'],
  ])('a bad e-mail (%s) → 400 page with the form again', async (_name, email) => {
    const res = await post(h, email);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('valid e-mail');
    expect(res.body).toMatch(/<form method="post" action="\/trial">/);
    expect(res.body).not.toContain('<script>');
  });

  it('no body at all → 400 page', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/trial' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('valid e-mail');
  });

  it('more than 5 keys an hour from one address → 429 page with Retry-After; other addresses and the next hour are unaffected', async () => {
    for (let i = 0; i < 5; i++) expect((await post(h, `user${i}@example.com`, '198.51.100.1')).statusCode).toBe(201);
    expect((await post(h, 'user5@example.com', '198.51.100.1')).statusCode).toBe(429);

    h.clock.advance(10 * 60_000);
    const refused = await post(h, 'user5@example.com', '198.51.100.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(refused.headers['retry-after']).toBe(String(50 * 60));
    expect(refused.body).not.toMatch(/trk_(live|test)_/);

    expect((await post(h, 'user5@example.com', '198.51.100.2')).statusCode).toBe(201);
    h.clock.advance(HOUR_MS - 10 * 60_000);
    expect((await post(h, 'user6@example.com', '198.51.100.1')).statusCode).toBe(201);
  });

  it('409 and 400 answers do not use the address allowance', async () => {
    keyOnPage((await post(h, 'first@example.com', '198.51.100.9')).body);
    for (let i = 0; i < 6; i++) {
      expect((await post(h, 'first@example.com', '198.51.100.9')).statusCode).toBe(409);
      expect((await post(h, 'broken', '198.51.100.9')).statusCode).toBe(400);
    }
    for (let i = 0; i < 4; i++) expect((await post(h, `more${i}@example.com`, '198.51.100.9')).statusCode).toBe(201);
    expect((await post(h, 'more4@example.com', '198.51.100.9')).statusCode).toBe(429);
  });
});
