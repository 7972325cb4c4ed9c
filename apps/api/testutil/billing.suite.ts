/**
 * Paying (contracts.md "Paying: renewal and upgrade") over real HTTP: the API listening on a free
 * port, the sandbox payment gateway (lib/sandbox/gateway.ts) it creates links at and that signs and
 * delivers the webhook, a real SMTP server catching the receipts. Run on the embedded store by
 * billing.test.ts and on one Redis and the Redis Cluster by billing.services.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../lib/billing/index.ts';
import { formatPeriodEnd } from '../../../lib/notices/index.ts';
import { startCaptureServer, type CaptureServer } from '../../../lib/notices/testutil/smtp-capture.ts';
import { paymentLinkPaidEvent, startGatewaySandbox, type RunningGateway } from '../../../lib/sandbox/gateway.ts';
import { ErrorBodySchema } from '../../../lib/schemas/index.ts';
import { ADMIN_TOKEN, MINUTE_MS, awbFor, expectRecord, startApiHarness, type ApiHarness, type StoreKind } from './harness.ts';

/** What a browser does with the renewal page, without one: the form's fields, posted as a form. */
export async function renewForm(base: string, prefix: string, plan?: string): Promise<{ status: number; html: string; attempt: string | null }> {
  const res = await fetch(`${base}/billing/renew?key=${prefix}${plan ? `&plan=${plan}` : ''}`);
  const html = await res.text();
  return { status: res.status, html, attempt: /name="attempt" value="([^"]+)"/.exec(html)?.[1] ?? null };
}

export function postRenew(base: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${base}/billing/renew`, { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields) });
}

export function deliver(base: string, body: string, signature: string | null): Promise<Response> {
  return fetch(`${base}/billing/razorpay/webhook`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'x-razorpay-signature': signature }) },
  });
}

export function billingSuite(store: StoreKind): void {
  describe(`paying (${store})`, () => {
    let api: ApiHarness;
    let gateway: RunningGateway;
    let smtp: CaptureServer;
    let base: string;

    beforeAll(async () => {
      smtp = await startCaptureServer();
      let clock = () => Date.now();
      gateway = await startGatewaySandbox({ clock: () => clock() });
      api = await startApiHarness({ store, paymentSandbox: gateway, env: { SMTP_URL: smtp.url } });
      clock = api.clock.now;
      base = await api.listen();
      gateway.setWebhookUrl(`${base}/billing/razorpay/webhook`);
    });
    afterAll(async () => {
      await api?.close();
      await gateway?.close();
      await smtp?.close();
    });

    const keyView = async (prefix: string) => (await api.admin('GET', `/admin/keys/${prefix}`)).json() as {
      plan: string; status: string; period: { start: string; end: string; lookups_used: number; lookups_limit: number };
    };
    const payments = async (prefix: string) => {
      const res = await api.admin('GET', `/admin/payments?key=${prefix}`);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { payments: { id: string; plan: string; amount_inr: number; status: string; paid_at: string; applied: boolean; reason: string | null }[] }).payments;
    };

    /** Renewal page → form → gateway → Pay, as the browser test does; returns the callback answer. */
    async function payThrough(prefix: string, plan: string): Promise<{ done: Response; paymentId: string }> {
      const page = await renewForm(base, prefix, plan);
      expect(page.status).toBe(200);
      const sent = await postRenew(base, { key: prefix, plan, attempt: page.attempt! });
      expect(sent.status).toBe(303);
      const payUrl = sent.headers.get('location')!;
      expect(payUrl.startsWith(`${gateway.url}/pay/plink_`)).toBe(true);
      const paid = await fetch(payUrl, { method: 'POST', redirect: 'manual' });
      expect(paid.status).toBe(303);
      const callback = new URL(paid.headers.get('location')!);
      expect(callback.origin + callback.pathname).toBe(`${base}/billing/renew/done`);
      // The return link is signed by the gateway: a changed one is refused.
      const forged = new URL(callback);
      forged.searchParams.set('razorpay_payment_link_status', 'partially_paid');
      const refused = await fetch(forged);
      expect(refused.status).toBe(400);
      expect(ErrorBodySchema.parse(await refused.json()).error.code).toBe('invalid_signature');
      return { done: await fetch(callback), paymentId: callback.searchParams.get('razorpay_payment_id')! };
    }

    it('the renewal page shows the key prefix, the plans in INR and what a renewal does, and nothing from elsewhere', async () => {
      const created = await api.createKey({ plan: 'growth' });
      const page = await renewForm(base, created.key_prefix, 'growth');
      expect(page.status).toBe(200);
      expect(page.html).toContain(created.key_prefix);
      expect(page.html).not.toContain(created.key);
      expect(page.html).not.toContain(created.email);
      expect(page.html).toContain('Growth: ₹999 for 30 days');
      expect(page.html).toContain('value="growth" checked');
      expect(page.html).toContain('counters at zero');
      expect(page.html).not.toMatch(/<script|<link|@import|https?:\/\/(?!127\.0\.0\.1)/);
      expect(page.attempt).toMatch(/^rn_/);
    });

    it('a trial key upgrades: renewal page → gateway → Pay → the key is on the plan at once, counters at zero, receipt mailed', async () => {
      const created = await api.createKey({ plan: 'trial' });
      expectRecord(await api.track(created.key, 'delhivery', awbFor('delhivery', 2)));
      expect((await keyView(created.key_prefix)).period.lookups_used).toBe(1);
      const page = await renewForm(base, created.key_prefix, 'trial');
      // A trial is not for sale: the page offers the paid plans, the cheapest chosen.
      expect(page.html).toContain('value="starter" checked');
      expect(page.html).not.toContain('value="trial"');

      api.clock.advance(MINUTE_MS);
      const { done, paymentId } = await payThrough(created.key_prefix, 'business');
      expect(done.status).toBe(200);
      const text = await done.text();
      expect(text).toContain('your key is renewed');
      expect(text).toContain('Business');

      const view = await keyView(created.key_prefix);
      expect(view).toMatchObject({ plan: 'business', status: 'active', period: { start: api.clock.iso(), lookups_used: 0, lookups_limit: 12000 } });
      expect(await payments(created.key_prefix)).toEqual([
        { id: paymentId, plan: 'business', amount_inr: 3000, status: 'captured', paid_at: new Date(Math.floor(api.clock.now() / 1000) * 1000).toISOString(), applied: true, reason: null },
      ]);
      const receipt = smtp.received.find((m) => m.headers['x-payment-id'] === paymentId);
      expect(receipt?.to).toEqual([created.email]);
      expect(receipt?.headers['subject']).toContain(`API key ${created.key_prefix} renewed on the Business plan`);
      expect(receipt?.raw).not.toContain(created.key);
    });

    it('the same webhook delivered again renews nothing more', async () => {
      const created = await api.createKey({ plan: 'starter' });
      const { paymentId } = await payThrough(created.key_prefix, 'starter');
      const first = await keyView(created.key_prefix);
      const delivery = gateway.deliveries.find((d) => d.body.includes(paymentId))!;
      expect(delivery.status).toBe(200);

      api.clock.advance(10 * MINUTE_MS);
      expectRecord(await api.track(created.key, 'delhivery', awbFor('delhivery', 2)));
      const again = await deliver(base, delivery.body, delivery.signature);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ received: true, outcome: 'duplicate' });
      const after = await keyView(created.key_prefix);
      expect(after.period).toEqual({ ...first.period, lookups_used: 1, lookups_remaining: first.period.lookups_limit - 1 });
      expect(await payments(created.key_prefix)).toHaveLength(1);
    });

    it('a wrong or missing signature is answered 400 and changes nothing', async () => {
      const created = await api.createKey({ plan: 'starter' });
      const before = await keyView(created.key_prefix);
      const body = JSON.stringify(paymentLinkPaidEvent({
        id: 'plink_forged0001', amount: 99_900, currency: 'INR', reference_id: 'rn_forgedforgedforged', description: 'x',
        notes: { key_prefix: created.key_prefix, plan: 'growth' },
      }, 'pay_forged0001', Math.floor(api.clock.now() / 1000)));
      for (const signature of [null, signWebhook(body, 'not-the-secret'), 'zz', signWebhook(`${body} `, gateway.webhookSecret)]) {
        const res = await deliver(base, body, signature);
        expect(res.status).toBe(400);
        expect(ErrorBodySchema.parse(await res.json()).error.code).toBe('invalid_signature');
      }
      expect(await keyView(created.key_prefix)).toEqual(before);
      expect(await payments(created.key_prefix)).toEqual([]);
      // The same body, rightly signed, is applied: only the signature was in the way.
      const right = await deliver(base, body, signWebhook(body, gateway.webhookSecret));
      expect(await right.json()).toEqual({ received: true, outcome: 'applied' });
      expect((await keyView(created.key_prefix)).plan).toBe('growth');
    });

    it("an amount that is not the plan's price is recorded and not applied", async () => {
      const created = await api.createKey({ plan: 'starter' });
      const before = await keyView(created.key_prefix);
      const body = JSON.stringify(paymentLinkPaidEvent({
        id: 'plink_short00001', amount: 39_800, currency: 'INR', reference_id: 'rn_shortshortshortsh', description: 'x',
        notes: { key_prefix: created.key_prefix, plan: 'starter' },
      }, 'pay_short000001', Math.floor(api.clock.now() / 1000)));
      const res = await deliver(base, body, signWebhook(body, gateway.webhookSecret));
      expect(await res.json()).toEqual({ received: true, outcome: 'not_applied' });
      expect(await keyView(created.key_prefix)).toEqual(before);
      expect(await payments(created.key_prefix)).toMatchObject([{ id: 'pay_short000001', plan: 'starter', amount_inr: 398, applied: false, reason: 'amount_mismatch' }]);
    });

    it('unknown, revoked and suspended prefixes get the same status and the same page, no form and no link (finding 8)', async () => {
      const created = await api.createKey({ plan: 'starter' });
      const page = await renewForm(base, created.key_prefix, 'starter');
      expect((await api.admin('POST', `/admin/keys/${created.key_prefix}/revoke`)).statusCode).toBe(200);
      const suspendedKey = await api.createKey({ plan: 'starter' });
      expect((await api.admin('POST', `/admin/keys/${suspendedKey.key_prefix}/suspend`)).statusCode).toBe(200);
      const linksBefore = gateway.links().length;

      const answers = await Promise.all([created.key_prefix, suspendedKey.key_prefix, 'trk_test_Zz9Zz9Z'].map((prefix) => renewForm(base, prefix, 'starter')));
      // One page for all three, told apart by nothing but the prefix it repeats.
      const normalized = answers.map((a, i) => ({ status: a.status, html: a.html.replaceAll([created.key_prefix, suspendedKey.key_prefix, 'trk_test_Zz9Zz9Z'][i]!, 'PREFIX') }));
      expect(new Set(normalized.map((n) => `${n.status} ${n.html}`)).size).toBe(1);
      expect(answers[0]!.status).toBe(404);
      expect(answers[0]!.html).toContain('No renewal is possible for this key');
      for (const answer of answers) {
        expect(answer.attempt).toBeNull();
        expect(answer.html).not.toContain('<form');
        expect(answer.html).not.toMatch(/revoked|suspended|unknown/i);
      }
      const posted = await Promise.all([
        postRenew(base, { key: created.key_prefix, plan: 'starter', attempt: page.attempt! }),
        postRenew(base, { key: suspendedKey.key_prefix, plan: 'starter', attempt: page.attempt! }),
        postRenew(base, { key: 'trk_test_Zz9Zz9Z', plan: 'starter', attempt: page.attempt! }),
      ]);
      expect(posted.map((p) => p.status)).toEqual([404, 404, 404]);
      expect(posted.map((p) => p.headers.get('location'))).toEqual([null, null, null]);
      expect(gateway.links().length).toBe(linksBefore);

      const malformed = await fetch(`${base}/billing/renew?key=nonsense`);
      expect(malformed.status).toBe(400);
      expect(ErrorBodySchema.parse(await malformed.json()).error.code).toBe('bad_request');
    });

    it('the renewal page shows neither the current plan nor the period end (finding 8)', async () => {
      const created = await api.createKey({ plan: 'growth' });
      const record = await keyView(created.key_prefix);
      const page = await renewForm(base, created.key_prefix, 'growth');
      expect(page.status).toBe(200);
      expect(page.html).not.toMatch(/current plan|period ends/i);
      // Neither as stored nor as the notices and the old page wrote it.
      for (const shown of [record.period.end, record.period.end.slice(0, 10), formatPeriodEnd(record.period.end)]) expect(page.html).not.toContain(shown);
      expect(page.html).not.toContain('id="current-plan"');
    });

    it('a stranger holding the prefix cannot downgrade an active key: not offered, refused on submit, and a paid lower link is recorded, not applied (finding 1)', async () => {
      const created = await api.createKey({ plan: 'business', lookups_limit: 50_000 });
      const before = await keyView(created.key_prefix);
      // The page offers renewal and upgrade only: for a business key, business.
      const page = await renewForm(base, created.key_prefix, 'starter');
      expect(page.status).toBe(200);
      expect(page.html).not.toContain('value="starter"');
      expect(page.html).not.toContain('value="growth"');
      expect(page.html).toContain('value="business" checked');
      const linksBefore = gateway.links().length;
      const submitted = await postRenew(base, { key: created.key_prefix, plan: 'starter', attempt: page.attempt! });
      expect(submitted.status).toBe(409);
      expect(submitted.headers.get('location')).toBeNull();
      expect(await submitted.text()).toContain('cannot be bought for this key while its period runs');
      expect(gateway.links().length).toBe(linksBefore);

      // A starter link paid anyway (made before an upgrade, or by hand): recorded, the key untouched.
      const body = JSON.stringify(paymentLinkPaidEvent({
        id: 'plink_lower00001', amount: 39_900, currency: 'INR', reference_id: 'rn_lowerlowerlowerlo', description: 'starter',
        notes: { key_prefix: created.key_prefix, plan: 'starter' },
      }, 'pay_lower000001', Math.floor(api.clock.now() / 1000)));
      const res = await deliver(base, body, signWebhook(body, gateway.webhookSecret));
      expect(await res.json()).toEqual({ received: true, outcome: 'not_applied' });
      expect(await keyView(created.key_prefix)).toEqual(before);
      expect(await payments(created.key_prefix)).toMatchObject([{ id: 'pay_lower000001', plan: 'starter', applied: false, reason: 'lower_plan' }]);
      const receipt = smtp.received.find((m) => m.headers['x-payment-id'] === 'pay_lower000001');
      expect(receipt?.headers['subject']).toContain('not applied');

      // Once the period has ended, the customer may choose less.
      api.clock.advance(Date.parse(before.period.end) - api.clock.now());
      const ended = await renewForm(base, created.key_prefix, 'starter');
      expect(ended.html).toContain('value="starter" checked');
    });

    it('a same-plan renewal keeps the overrides; an upgrade never lowers them (finding 1)', async () => {
      const created = await api.createKey({ plan: 'starter', lookups_limit: 20_000, daily_quota: 5_000 });
      await payThrough(created.key_prefix, 'starter');
      expect(await keyView(created.key_prefix)).toMatchObject({ plan: 'starter', period: { lookups_limit: 20_000 } });
      const usage = await api.usage(created.key);
      expect(usage.rate_limits.daily_quota).toBe(5_000);
      await payThrough(created.key_prefix, 'growth');
      const upgraded = await api.usage(created.key);
      expect(upgraded).toMatchObject({ plan: 'growth', period: { lookups_limit: 20_000 }, rate_limits: { daily_quota: 5_000, burst_per_second: 10 } });
    });

    it('gateway down: the page says so and nothing is charged; the retry reuses the attempt, so one link only', async () => {
      const created = await api.createKey({ plan: 'starter' });
      const page = await renewForm(base, created.key_prefix, 'growth');
      const fields = { key: created.key_prefix, plan: 'growth', attempt: page.attempt! };
      gateway.setDown(true);
      let down: Response;
      try {
        down = await postRenew(base, fields);
      } finally {
        gateway.setDown(false);
      }
      expect(down.status).toBe(503);
      const html = await down.text();
      expect(html).toContain('could not be reached, so nothing was charged');
      expect(html).toContain(`value="${page.attempt}"`);

      const first = await postRenew(base, fields);
      const second = await postRenew(base, fields);
      expect(first.status).toBe(303);
      expect(second.headers.get('location')).toBe(first.headers.get('location'));
      expect(gateway.links().filter((l) => l.reference_id === page.attempt)).toHaveLength(1);
    });

    it('the webhook reads any body type as raw bytes; other routes keep their parsers; a wrong method is 405', async () => {
      const created = await api.createKey({ plan: 'starter' });
      const body = JSON.stringify(paymentLinkPaidEvent({
        id: 'plink_plain00001', amount: 39_900, currency: 'INR', reference_id: 'rn_plainplainplainpl', description: 'x',
        notes: { key_prefix: created.key_prefix, plan: 'starter' },
      }, 'pay_plain000001', Math.floor(api.clock.now() / 1000)));
      const plain = await api.app.inject({ method: 'POST', url: '/billing/razorpay/webhook', payload: body, headers: { 'content-type': 'text/plain', 'x-razorpay-signature': signWebhook(body, gateway.webhookSecret) } });
      expect(plain.json()).toEqual({ received: true, outcome: 'applied' });
      const other = await api.app.inject({ method: 'POST', url: '/billing/razorpay/webhook', payload: '{"entity":"event","event":"payment.captured"}', headers: { 'content-type': 'application/json', 'x-razorpay-signature': signWebhook('{"entity":"event","event":"payment.captured"}', gateway.webhookSecret) } });
      expect(other.json()).toEqual({ received: true, outcome: 'ignored' });
      const notJson = await api.app.inject({ method: 'POST', url: '/billing/razorpay/webhook', payload: 'hello', headers: { 'content-type': 'application/json', 'x-razorpay-signature': signWebhook('hello', gateway.webhookSecret) } });
      expect(notJson.statusCode).toBe(400);
      expect(notJson.json().error.code).toBe('bad_request');
      // The admin API still refuses a text body (its own parser, not the webhook's).
      const admin = await api.app.inject({ method: 'POST', url: '/admin/keys', payload: 'x', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/plain' } });
      expect(admin.statusCode).toBe(415);
      expect((await api.app.inject({ method: 'GET', url: '/billing/razorpay/webhook' })).statusCode).toBe(405);
    });

    it('GET /admin/payments needs the admin token and a key prefix', async () => {
      const none = await api.app.inject({ method: 'GET', url: '/admin/payments?key=trk_test_Ab3dE9x' });
      expect(none.statusCode).toBe(401);
      expect((await api.admin('GET', '/admin/payments')).statusCode).toBe(400);
      expect((await api.admin('GET', '/admin/payments?key=trk_test_Ab3dE9x')).json()).toEqual({ key_prefix: 'trk_test_Ab3dE9x', payments: [] });
    });
  });
}
