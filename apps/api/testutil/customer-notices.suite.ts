/**
 * Customer notices through the API (contracts.md "Customer notices", issue 43), on a state store:
 * a watch's `customer` (consent, checks, masked answers, erasure), notices along a whole shipment
 * life made by the sandbox carrier network (scenario 26: picked up, out for delivery, a failed
 * attempt, out again, delivered) and received by the sandbox providers in the customer's language,
 * the list and the settings, Meta's signed webhook (a status, a STOP; a wrong signature refused),
 * the e-mail's unsubscribe link, `GET /v1/usage`'s count, and the personal-data check: a marker
 * phone and e-mail are found afterwards in no file under DATA_DIR, no log line and no answer.
 */
import { createHmac } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMessagingSandbox, type RunningMessaging } from '../../../lib/sandbox/messaging.ts';
import { awbFor, expectError, MINUTE_MS, startApiHarness, type ApiHarness, type StoreKind } from './harness.ts';

/** Marker contacts: any trace of them afterwards is a leak. */
const MARKER_DIGITS = '9988776655';
const MARKER_PHONE = `+91${MARKER_DIGITS}`;
const MARKER_EMAIL = 'marker.q7z@example.com';
const SMS_TOKEN = 'sms-inbound-token-0123456789';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  return out;
}

interface WatchAnswer { watch: { customer: { channels: string[]; language: string; phone: string | null; email: string | null } | null } }
interface NoticeItem { event: string; channel: string | null; status: string; language: string; template: string | null; detail: string | null }

export function customerNoticesApiSuite(store: StoreKind): void {
  describe(`customer notices through the API (${store} store)`, () => {
    let h: ApiHarness;
    let messaging: RunningMessaging;
    let key: string;
    const logs: string[] = [];

    beforeAll(async () => {
      messaging = await startMessagingSandbox();
      const logStream = new Writable({ write(chunk, _enc, done) { logs.push(String(chunk)); done(); } });
      h = await startApiHarness({
        store, logLevel: 'info', messagingSandbox: messaging, env: { SMS_INBOUND_TOKEN: SMS_TOKEN }, deps: (deps) => ({ ...deps, logStream }),
      });
      messaging.setWebhooks({ whatsapp: 'http://127.0.0.1:1/unused' });
      key = (await h.createKey({ plan: 'business', mode: 'test', burst_per_second: 1000 })).key;
      // Quiet hours would hold the day's notices at this test's clock; this suite tests them elsewhere.
      expect((await call('PUT', '/v1/notices/settings', { quiet_hours: null })).statusCode).toBe(200);
    }, 60_000);
    afterAll(async () => {
      await h.close();
      await messaging.close();
    });

    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) =>
      h.app.inject({ method, url, headers: { 'x-api-key': key }, ...(body === undefined ? {} : { payload: body as object }) });
    const used = async () => (await h.usage(key)).period.lookups_used;
    /** Polls the shipment once more (the cache holds a moving record 30 minutes) and lets push and notices run. */
    const step = async (awb: string) => {
      h.clock.advance(31 * MINUTE_MS);
      expect((await h.track(key, 'delhivery', awb)).statusCode).toBe(200);
      await h.runtime.bus.flush();
      await h.runtime.push.dispatcher.drain();
      // The runtime's own loop sends them: wait until none of the shipment's is queued.
      for (let i = 0; i < 200 && (await noticesOf(awb)).some((n) => n.status === 'queued'); i++) await new Promise((r) => setTimeout(r, 25));
    };
    const noticesOf = async (awb: string) => ((await call('GET', `/v1/notices?carrier=delhivery&awb=${awb}`)).json() as { notices: NoticeItem[] }).notices;

    it('refuses a contact without consent or that cannot be used: 400 in the standard body, nothing consumed or stored', async () => {
      const awb = awbFor('delhivery', 26, 1);
      const before = await used();
      const base = { carrier: 'delhivery', awb };
      const noConsent = expectError(await call('POST', '/v1/trackings', { ...base, customer: { phone: MARKER_PHONE, channels: ['sms'] } }), 400, 'consent_required');
      expect(noConsent.message).toContain('customer.consent');
      expectError(await call('POST', '/v1/trackings', { ...base, customer: { phone: MARKER_PHONE, consent: 'yes' } }), 400, 'consent_required');
      for (const customer of [
        { phone: '12345', consent: true }, { email: 'not-an-address', consent: true }, { phone: MARKER_PHONE, channels: ['email'], consent: true },
        { channels: [], phone: MARKER_PHONE, consent: true }, { phone: MARKER_PHONE, channels: ['pigeon'], consent: true },
      ]) {
        const error = expectError(await call('POST', '/v1/trackings', { ...base, customer }), 400, customer.channels?.[0] === 'pigeon' ? 'bad_request' : 'invalid_customer');
        expect(error.message).not.toContain(MARKER_DIGITS);
      }
      expect(await used()).toBe(before);
      expectError(await call('GET', `/v1/trackings/delhivery/${awb}`), 404, 'not_found');
      // A plan without notices keeps no contact: refused whole, nothing consumed.
      const starter = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 })).key;
      const refused = await h.app.inject({
        method: 'POST', url: '/v1/trackings', headers: { 'x-api-key': starter }, payload: { ...base, customer: { phone: MARKER_PHONE, consent: true } },
      });
      expectError(refused, 403, 'plan_feature_unavailable');
      expect((await h.usage(starter)).period.lookups_used).toBe(0);
    });

    it('tells the customer the whole journey in their language on their channel, and lists it without the contact', async () => {
      const awb = awbFor('delhivery', 26, 2);
      const created = await call('POST', '/v1/trackings', {
        carrier: 'delhivery', awb, customer: { phone: MARKER_PHONE, email: MARKER_EMAIL, language: 'hi', channels: ['whatsapp', 'email'], consent: true },
      });
      expect(created.statusCode, created.body).toBe(201);
      expect((created.json() as WatchAnswer).watch.customer).toEqual({ channels: ['whatsapp', 'email'], language: 'hi', phone: '+91******6655', email: 'm***@example.com' });
      expect((await call('GET', `/v1/trackings/delhivery/${awb}`)).json()).toMatchObject({ watch: { customer: { phone: '+91******6655' } } });
      // Scenario 26, a stage per poll: picked up, a hub, out for delivery, a failed attempt.
      for (let i = 0; i < 4; i++) await step(awb);
      const told = (await noticesOf(awb)).reverse();
      expect(told.map((n) => n.event)).toEqual(['picked_up', 'out_for_delivery', 'failed_attempt']);
      expect(told.every((n) => n.channel === 'whatsapp' && n.language === 'hi' && n.status === 'sent')).toBe(true);
      const received = messaging.received().filter((m) => m.variables.awb === awb);
      expect(received.map((m) => m.template)).toEqual(['shipment_picked_up', 'shipment_out_for_delivery', 'shipment_failed_attempt']);
      expect(received.every((m) => m.channel === 'whatsapp' && m.language === 'hi' && m.to === '+91******6655')).toBe(true);
      expect(received[2]!.variables.reason).toBe('कोई उपलब्ध नहीं था');
      // Every notice links to the watch's tracking page.
      const page = ((created.json() as { watch: { page_url: string } }).watch.page_url);
      expect(received.map((m) => m.variables.link)).toEqual(received.map(() => page));
    }, 60_000);

    it('takes Meta\'s signed status and STOP; refuses a wrong signature', async () => {
      const secret = h.deps.notices!.whatsappAppSecret!;
      const awb = awbFor('delhivery', 26, 2);
      const sent = (await noticesOf(awb))[0]!;
      const listed = await h.deps.notices!.store.list(key.slice(0, 16), { carrier: 'delhivery', awb }, 0, 1);
      const id = listed.items[0]!.id;
      const status = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { statuses: [{ id: 'wamid.x', status: 'delivered', biz_opaque_callback_data: `${key.slice(0, 16)}|${id}` }] } }] }] });
      const signed = (body: string, s = secret) => `sha256=${createHmac('sha256', s).update(body).digest('hex')}`;
      const post = (body: string, signature: string) => h.app.inject({ method: 'POST', url: '/notices/whatsapp/webhook', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, payload: body });
      expectError(await post(status, signed(status, 'not-the-secret')), 400, 'invalid_signature');
      expectError(await post(status, 'sha256=00'), 400, 'invalid_signature');
      expect((await noticesOf(awb))[0]!.status).toBe(sent.status);
      expect((await post(status, signed(status))).statusCode).toBe(200);
      expect((await noticesOf(awb))[0]!.status).toBe('delivered');

      const stop = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { messages: [{ from: `91${MARKER_DIGITS}`, type: 'text', text: { body: 'STOP' } }] } }] }] });
      expect((await post(stop, signed(stop))).statusCode).toBe(200);
      await step(awb);
      const last = (await noticesOf(awb))[0]!;
      // The phone stopped: the next notice (out for delivery again) goes by e-mail, the other channel.
      expect(last).toMatchObject({ event: 'out_for_delivery', channel: 'email', status: 'sent' });
    }, 60_000);

    it('takes an SMS STOP only at the inbound URL with its token', async () => {
      const awb = awbFor('delhivery', 26, 3);
      const phone = '+919812300001';
      expect((await call('POST', '/v1/trackings', { carrier: 'delhivery', awb, customer: { phone, channels: ['sms'], consent: true } })).statusCode).toBe(201);
      await step(awb);
      expect((await noticesOf(awb))[0]).toMatchObject({ event: 'picked_up', channel: 'sms', status: 'sent' });
      const reply = (token: string) => h.app.inject({ method: 'POST', url: `/notices/sms/inbound?token=${token}`, payload: { mobile: '919812300001', message: ' stop ' } });
      expectError(await reply('wrong-token-0123456789'), 401, 'unauthorized');
      expect((await reply(SMS_TOKEN)).statusCode).toBe(200);
      await step(awb);
      await step(awb);
      expect((await noticesOf(awb))[0]).toMatchObject({ event: 'out_for_delivery', status: 'suppressed', detail: 'customer stopped notices' });
    }, 60_000);

    it('unsubscribes an address by the e-mail\'s one-click link (GET only asks)', async () => {
      const awb = awbFor('delhivery', 26, 2);
      const mail = messaging.received().filter((m) => m.channel === 'email').at(-1)!;
      const url = new URL(mail.headers['list-unsubscribe']!.slice(1, -1));
      expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      const asked = await h.app.inject({ method: 'GET', url: url.pathname });
      expect(asked.statusCode).toBe(200);
      expect(asked.body).toContain('<form method="post"');
      const done = await h.app.inject({ method: 'POST', url: url.pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
      expect(done.statusCode).toBe(200);
      expect((await h.app.inject({ method: 'POST', url: `${url.pathname.slice(0, -4)}AAAA` })).statusCode).toBe(404);
      await step(awb);
      expect((await noticesOf(awb))[0]).toMatchObject({ event: 'delivered', status: 'suppressed', detail: 'customer stopped notices' });
    }, 60_000);

    it('counts notices in GET /v1/usage, keeps settings, and erases the contact on request', async () => {
      const usage = await h.usage(key) as unknown as { notices: { used: number; limit: number } };
      expect(usage.notices).toEqual({ used: 5, limit: 10000 });
      // The process that sends them counts them (the embedded default: the API's).
      if (store === 'embedded') expect(await h.metric('customer_notices_total', { status: 'sent' })).toBe(5);
      const put = await call('PUT', '/v1/notices/settings', { events: ['delivered', 'out_for_delivery'] });
      expect(put.json()).toEqual({ events: ['out_for_delivery', 'delivered'], quiet_hours: null });
      expectError(await call('PUT', '/v1/notices/settings', { events: ['gossip'] }), 400, 'bad_request');
      expectError(await call('PUT', '/v1/notices/settings', { quiet_hours: { start: '25:00', end: '09:00' } }), 400, 'bad_request');
      const awb = awbFor('delhivery', 26, 2);
      expect((await call('DELETE', `/v1/trackings/delhivery/${awb}/customer`)).statusCode).toBe(204);
      expect((await call('GET', `/v1/trackings/delhivery/${awb}`)).json()).toMatchObject({ watch: { customer: null } });
      expectError(await call('DELETE', `/v1/trackings/delhivery/${awbFor('delhivery', 26, 9)}/customer`), 404, 'not_found');
    });

    it('leaves no trace of the customer\'s phone or e-mail in any file, log line or answer', async () => {
      await h.runtime.bus.flush();
      const leaks: string[] = [];
      for (const file of await filesUnder(h.dataDir)) {
        const text = (await readFile(file)).toString('latin1');
        if (text.includes(MARKER_DIGITS) || text.includes(MARKER_EMAIL)) leaks.push(file);
      }
      expect(leaks).toEqual([]);
      expect(logs.filter((l) => l.includes(MARKER_DIGITS) || l.includes(MARKER_EMAIL))).toEqual([]);
      expect(logs.length).toBeGreaterThan(0);
      const answers = h.answers.map((a) => JSON.stringify(a));
      expect(answers.filter((a) => a.includes(MARKER_DIGITS) || a.includes(MARKER_EMAIL))).toEqual([]);
    });
  });
}
