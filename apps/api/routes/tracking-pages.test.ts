/**
 * The tracking page's links and routes (contracts.md "Tracking page"), on the embedded default:
 * a watch answers page_url (and order_page_url with order_id); the page needs no key, consumes no
 * lookup, says noindex and loads nothing from another host; it is gone when the watch is deleted,
 * the key revoked, 30 days after the shipment ended, or for any token it did not hand out.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pngOf } from '../../../lib/branding/testutil/images.ts';
import { DAY_MS, awbFor, startApiHarness, type ApiHarness } from '../testutil/harness.ts';

let h: ApiHarness;
beforeEach(async () => { h = await startApiHarness({ deps: (deps) => ({ ...deps, pageViewsPerMinute: 1_000 }) }); });
afterEach(async () => { await h.close(); });

interface WatchAnswer { watch: { page_url: string; order_page_url: string | null; order_id: string | null; language: string | null } }

async function watch(key: string, body: Record<string, unknown>): Promise<WatchAnswer['watch']> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/trackings', headers: { 'x-api-key': key }, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as WatchAnswer).watch;
}

/** The path of a page URL (the harness is not listening: links name http://localhost). */
const pathOf = (url: string) => new URL(url).pathname;
const view = (path: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url: path, headers });

describe('tracking page', () => {
  it('a watch answers its page; the page shows the shipment in the language asked, no key needed, no lookup consumed', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const w = await watch(key.key, { carrier: 'delhivery', awb: awbFor('delhivery', 2), language: 'ta' });
    expect(w.page_url).toMatch(/^http:\/\/localhost\/t\/[A-Za-z0-9_-]{32}$/);
    expect(w.order_page_url).toBeNull();
    const used = (await h.usage(key.key)).period.lookups_used;

    const page = await view(pathOf(w.page_url));
    expect(page.statusCode, page.body).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-robots-tag']).toBe('noindex, nofollow');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    // The watch's language, then ?lang=, then the browser's.
    expect(page.body).toContain('<html lang="ta"');
    expect((await view(`${pathOf(w.page_url)}?lang=hi`)).body).toContain('<html lang="hi"');
    expect(page.body).not.toMatch(/<script|https?:\/\/(?!localhost)[a-z]/i);
    expect((await h.usage(key.key)).period.lookups_used).toBe(used);

    // The watch read again answers the same link.
    const again = await h.app.inject({ method: 'GET', url: `/v1/trackings/delhivery/${awbFor('delhivery', 2)}`, headers: { 'x-api-key': key.key } });
    expect((again.json() as WatchAnswer).watch.page_url).toBe(w.page_url);
  });

  it('the browser\'s language decides when neither the link nor the watch does', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const w = await watch(key.key, { carrier: 'delhivery', awb: awbFor('delhivery', 3) });
    expect((await view(pathOf(w.page_url), { 'accept-language': 'bn-IN,bn;q=0.9,en;q=0.5' })).body).toContain('<html lang="bn"');
    expect((await view(pathOf(w.page_url))).body).toContain('<html lang="en"');
  });

  it('gone when the watch is deleted (a new watch has a new link), for a changed token, and for another key\'s shipment', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const other = await h.createKey({ plan: 'starter', mode: 'test' });
    const awb = awbFor('delhivery', 2);
    const first = await watch(key.key, { carrier: 'delhivery', awb });
    const theirs = await watch(other.key, { carrier: 'delhivery', awb });
    expect(theirs.page_url).not.toBe(first.page_url);

    const token = pathOf(first.page_url).slice(3);
    for (const changed of [`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, token.toLowerCase(), token.slice(2)]) {
      if (changed === token) continue;
      const res = await view(`/t/${changed}`);
      expect(res.statusCode).toBe(404);
      expect(res.headers['x-robots-tag']).toBe('noindex, nofollow');
    }
    // An order token does not open a shipment page, nor the reverse.
    expect((await view(`/o/${token}`)).statusCode).toBe(404);

    const deleted = await h.app.inject({ method: 'DELETE', url: `/v1/trackings/delhivery/${awb}`, headers: { 'x-api-key': key.key } });
    expect(deleted.statusCode).toBe(204);
    expect((await view(pathOf(first.page_url))).statusCode).toBe(404);
    expect((await view(pathOf(theirs.page_url))).statusCode).toBe(200);
    h.clock.advance(1_000);
    const second = await watch(key.key, { carrier: 'delhivery', awb });
    expect(second.page_url).not.toBe(first.page_url);
    expect((await view(pathOf(first.page_url))).statusCode).toBe(404);
    expect((await view(pathOf(second.page_url))).statusCode).toBe(200);
  });

  it('gone when the key is revoked, and 30 days after the shipment was delivered', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const moving = await watch(key.key, { carrier: 'delhivery', awb: awbFor('delhivery', 2) });
    const delivered = await watch(key.key, { carrier: 'delhivery', awb: awbFor('delhivery', 4) });
    expect((await view(pathOf(delivered.page_url))).statusCode).toBe(200);
    h.clock.advance(29 * DAY_MS);
    expect((await view(pathOf(delivered.page_url))).statusCode).toBe(200);
    h.clock.advance(2 * DAY_MS);
    expect((await view(pathOf(delivered.page_url))).statusCode).toBe(404);

    const revoked = await h.admin('POST', `/admin/keys/${key.key.slice(0, 16)}/revoke`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await view(pathOf(moving.page_url))).statusCode).toBe(404);
  });

  it('an order\'s page lists every watched parcel of that order of the key, on two carriers, and none of another order', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const parcels = [
      await watch(key.key, { carrier: 'delhivery', awb: awbFor('delhivery', 2), order_id: 'ORD-7' }),
      await watch(key.key, { carrier: 'delhivery', awb: awbFor('delhivery', 4), order_id: 'ORD-7' }),
      await watch(key.key, { carrier: 'bluedart', awb: awbFor('bluedart', 3), order_id: 'ORD-7' }),
    ];
    const elsewhere = await watch(key.key, { carrier: 'dtdc', awb: awbFor('dtdc', 2), order_id: 'ORD-8' });
    expect(new Set(parcels.map((p) => p.order_page_url)).size).toBe(1);
    expect(elsewhere.order_page_url).not.toBe(parcels[0]!.order_page_url);

    const page = await view(pathOf(parcels[0]!.order_page_url!));
    expect(page.statusCode, page.body).toBe(200);
    // Each parcel links its own page; the other order's parcel is not there.
    for (const p of parcels) expect(page.body).toContain(`../t/${pathOf(p.page_url).slice(3)}`);
    expect(page.body).not.toContain(pathOf(elsewhere.page_url).slice(3));

    await h.app.inject({ method: 'DELETE', url: `/v1/trackings/bluedart/${awbFor('bluedart', 3)}`, headers: { 'x-api-key': key.key } });
    expect((await view(pathOf(parcels[0]!.order_page_url!))).body).not.toContain(pathOf(parcels[2]!.page_url).slice(3));
  });

  it('a watch call with a bad order_id or language is refused with the standard error body, and makes no watch', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    for (const body of [{ order_id: 'has space' }, { order_id: 'x'.repeat(65) }, { language: 'fr' }]) {
      const res = await h.app.inject({
        method: 'POST', url: '/v1/trackings', headers: { 'x-api-key': key.key }, payload: { carrier: 'delhivery', awb: awbFor('delhivery', 2), ...body },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect((res.json() as { error: { code: string } }).error.code).toBe('bad_request');
    }
    const list = await h.app.inject({ method: 'GET', url: '/v1/trackings', headers: { 'x-api-key': key.key } });
    expect((list.json() as { watches: unknown[] }).watches).toEqual([]);
  });
});

describe('tracking page branding', () => {
  it('shows the shop\'s name and masked AWB; only the listed origins may frame it', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const awb = awbFor('delhivery', 2);
    const w = await watch(key.key, { carrier: 'delhivery', awb });
    const before = await view(pathOf(w.page_url));
    expect(before.headers['x-frame-options']).toBe('DENY');
    const branding = {
      name: 'Kaveri <Sarees>', accent_color: '#7a1f5c', logo: null, support_url: 'https://kaveri.example.in/help', mask_awb: true,
      frame_ancestors: ['https://kaveri.example.in', 'https://shop.kaveri.example.in:8443'],
    };
    const put = await h.app.inject({ method: 'PUT', url: '/v1/branding', headers: { 'x-api-key': key.key }, payload: branding });
    expect(put.statusCode, put.body).toBe(200);

    const page = await view(pathOf(w.page_url));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Kaveri &lt;Sarees&gt;');
    expect(page.body).not.toContain(awb);
    expect(page.body).toContain(awb.slice(-4));
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors https:\/\/kaveri\.example\.in https:\/\/shop\.kaveri\.example\.in:8443$/);
    expect(page.headers['x-frame-options']).toBeUndefined();
    // Another key's pages keep the default: nothing of this shop, framing refused.
    const other = await h.createKey({ plan: 'starter', mode: 'test' });
    const theirs = await view(pathOf((await watch(other.key, { carrier: 'delhivery', awb })).page_url));
    expect(theirs.body).not.toContain('Kaveri');
    expect(theirs.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });
});

describe('the shop\'s logo', () => {
  it('is served from the page\'s own host at <token>/logo (the page does not carry its bytes), versioned, for as long as the page opens', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const awb = awbFor('delhivery', 2);
    const w = await watch(key.key, { carrier: 'delhivery', awb, order_id: 'ORD-7' });
    const token = pathOf(w.page_url).slice(3);
    expect((await view(`/t/${token}/logo`)).statusCode).toBe(404);
    expect((await view(pathOf(w.page_url))).body).not.toContain('<img');

    // The largest logo the branding allows: the page stays small, the logo comes apart.
    const png = pngOf(1, 1, [0x1a, 0x73, 0xe8], 50 * 1024 - 200);
    const logo = `data:image/png;base64,${png.toString('base64')}`;
    const put = await h.app.inject({ method: 'PUT', url: '/v1/branding', headers: { 'x-api-key': key.key }, payload: { name: 'Kaveri', logo } });
    expect(put.statusCode, put.body).toBe(200);
    const page = await view(pathOf(w.page_url));
    const src = /<img src="([^"]+)"/.exec(page.body)?.[1];
    expect(src).toMatch(new RegExp(`^${token}/logo\\?v=[0-9a-f]{12}$`));
    expect(Buffer.byteLength(page.body)).toBeLessThan(30 * 1024);
    expect(page.body).not.toContain(png.toString('base64').slice(0, 40));

    const served = await view(new URL(src!, `http://localhost${pathOf(w.page_url)}`).pathname + `?${src!.split('?')[1]}`);
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['cache-control']).toBe('private, max-age=86400, immutable');
    expect(served.rawPayload.equals(png)).toBe(true);
    // The order's page shows it too, from its own address.
    const orderToken = pathOf(w.order_page_url!).slice(3);
    expect((await view(pathOf(w.order_page_url!))).body).toContain(`<img src="${orderToken}/logo?v=`);
    expect((await view(`/o/${orderToken}/logo`)).rawPayload.equals(png)).toBe(true);
    // A new logo is a new address.
    const jpeg = { name: 'Kaveri', logo: `data:image/png;base64,${pngOf(2, 2).toString('base64')}` };
    await h.app.inject({ method: 'PUT', url: '/v1/branding', headers: { 'x-api-key': key.key }, payload: jpeg });
    expect(/<img src="([^"]+)"/.exec((await view(pathOf(w.page_url))).body)?.[1]).not.toBe(src);

    // Gone with the page: a changed token, an order token as a shipment's, a deleted watch.
    expect((await view(`/t/${token.slice(1)}x/logo`)).statusCode).toBe(404);
    expect((await view(`/t/${orderToken}/logo`)).statusCode).toBe(404);
    await h.app.inject({ method: 'DELETE', url: `/v1/trackings/delhivery/${awb}`, headers: { 'x-api-key': key.key } });
    expect((await view(`/t/${token}/logo`)).statusCode).toBe(404);
  });
});

describe('before the carrier\'s first scan', () => {
  it('the page opens and says it waits for the courier\'s first update; a view asks for a fresh poll', async () => {
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    // Scenario 00: the carrier has no data for the number yet.
    const awb = awbFor('delhivery', 0);
    const res = await h.app.inject({ method: 'POST', url: '/v1/trackings', headers: { 'x-api-key': key.key }, payload: { carrier: 'delhivery', awb } });
    expect(res.statusCode, res.body).toBe(201);
    const answer = res.json() as WatchAnswer & { tracking: unknown };
    expect(answer.tracking).toBeNull();
    const polls = await h.carrierPolls('delhivery');
    const page = await view(`${pathOf(answer.watch.page_url)}?lang=hi`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>कूरियर की पहली जानकारी का इंतज़ार है</h1>');
    expect(page.body).toContain(awb);
    expect(page.body).not.toMatch(/class="(?:done|current)"/);
    // One fresh poll in the background; more views within 30 minutes ask for none.
    await vi.waitFor(async () => expect(await h.carrierPolls('delhivery')).toBe(polls + 1));
    expect((await view(pathOf(answer.watch.page_url))).statusCode).toBe(200);
    h.clock.advance(10 * 60_000);
    expect((await view(pathOf(answer.watch.page_url))).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await h.carrierPolls('delhivery')).toBe(polls + 1);
  });
});

describe('tracking page views per address', () => {
  it('past the limit a view is answered 429 with Retry-After', async () => {
    await h.close();
    h = await startApiHarness({ deps: (deps) => ({ ...deps, pageViewsPerMinute: 3 }) });
    const key = await h.createKey({ plan: 'starter', mode: 'test' });
    const w = await watch(key.key, { carrier: 'delhivery', awb: awbFor('delhivery', 2) });
    for (let i = 0; i < 3; i++) expect((await view(pathOf(w.page_url))).statusCode).toBe(200);
    const limited = await view(pathOf(w.page_url));
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});
