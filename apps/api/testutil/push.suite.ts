/**
 * Push end to end, on both state stores (embedded journal and Redis): watches through the API,
 * polls by the poller, events delivered over real HTTP to a loopback receiver that verifies every
 * delivery with the `standardwebhooks` package.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refreshPolicyOf, type RefreshTicks } from '../../../lib/poller/index.ts';
import { startReceiver, type Receiver } from '../../../lib/push/testutil/receiver.ts';
import { startRuntimePoller } from './poller.ts';
import { awbFor, expectError, startApiHarness, type ApiHarness , type StoreKind } from './harness.ts';

const INTERVAL_S = 7200;

/** Run against the embedded store by push.test.ts and against Redis by push.services.test.ts. */
export function pushSuite(store: StoreKind): void {
  describe(`push (${store} store)`, () => {
    let h: ApiHarness;
    let receiver: Receiver;
    let poller: RefreshTicks;
    let key: string;

    beforeEach(async () => {
      h = await startApiHarness({ store });
      receiver = await startReceiver();
      poller = startRuntimePoller(h.runtime, h.clock.now, refreshPolicyOf(INTERVAL_S));
      key = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 })).key;
    });
    afterEach(async () => {
      await poller.stop();
      await receiver.close();
      await h.close();
    });

    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, apiKey = key) =>
      h.app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(body === undefined ? {} : { payload: body as object }) });

    async function subscribe(extra: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
      const res = await call('POST', '/v1/webhooks', { url: receiver.url, ...extra });
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json() as { id: string; secret: string; status: string };
      expect(body.status).toBe('enabled');
      expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      receiver.setSecrets([body.secret]);
      return body;
    }

    async function watch(carrier: string, awb: string, apiKey = key) {
      return call('POST', '/v1/trackings', { carrier, awb }, apiKey);
    }

    /** One poller round after the interval: every watched, active shipment is polled once. */
    async function pollRound(): Promise<void> {
      h.clock.advance(INTERVAL_S * 1000);
      await poller.tick();
      await h.runtime.bus.flush();
      await h.runtime.push.dispatcher.drain();
    }

    const trackingEvents = () => receiver.accepted().filter((d) => (d.body as { type: string }).type.startsWith('tracking.'));
    const data = (d: { body: unknown }) => (d.body as { data: { sequence: number; previous: unknown; new_events: { code: string; reason_code: string | null }[]; tracking: { status: string; insights: { current_stage: string } } } }).data;

    it('scenario 25: one event per stage, sequences 1..n, types in order, the last tracking.delivered', async () => {
      await subscribe();
      const awb = awbFor('delhivery', 25);
      const created = await watch('delhivery', awb);
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json()).toMatchObject({ watch: { carrier: 'delhivery', awb, status: 'active' }, tracking: { status: expect.any(String) } });
      for (let round = 0; round < 6; round++) await pollRound();
      await receiver.waitFor(() => trackingEvents().length >= 4);
      const events = trackingEvents();
      expect(events.map((d) => data(d).sequence)).toEqual([1, 2, 3, 4]);
      expect(events.map((d) => (d.body as { type: string }).type)).toEqual(['tracking.updated', 'tracking.updated', 'tracking.out_for_delivery', 'tracking.delivered']);
      expect(events.every((d) => d.verifiedWith.length === 1)).toBe(true);
      expect(new Set(events.map((d) => d.id)).size).toBe(4);
      expect(data(events[0]!).previous).toMatchObject({ current_stage: 'awaiting_pickup' });
      expect(data(events[3]!).tracking.status).toBe('delivered');
      // Delivered is terminal: the watch stops being polled.
      const polls = await h.carrierPolls('delhivery');
      await pollRound();
      expect(await h.carrierPolls('delhivery')).toBe(polls);
    });

    it('scenario 26: the failed attempt is a tracking.exception with reason customer_unavailable', async () => {
      await subscribe();
      expect((await watch('delhivery', awbFor('delhivery', 26))).statusCode).toBe(201);
      for (let round = 0; round < 8; round++) await pollRound();
      await receiver.waitFor(() => trackingEvents().length >= 6);
      const types = trackingEvents().map((d) => (d.body as { type: string }).type);
      expect(types).toEqual(['tracking.updated', 'tracking.updated', 'tracking.out_for_delivery', 'tracking.exception', 'tracking.out_for_delivery', 'tracking.delivered']);
      const exception = trackingEvents()[3]!;
      expect(data(exception).new_events.map((e) => e.reason_code)).toContain('customer_unavailable');
      expect(data(exception).tracking.insights.current_stage).toBe('delivery_attempted');
    });

    it('a receiver failing its first attempts gets the event later with the same webhook-id; Retry-After is honoured', async () => {
      const endpoint = await subscribe();
      receiver.respond(({ attemptOfThisId }) => (attemptOfThisId === 1 ? { status: 500 } : attemptOfThisId === 2 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 200 }));
      const awb = awbFor('delhivery', 25);
      await watch('delhivery', awb);
      await pollRound();
      await receiver.waitFor(() => receiver.deliveries.length >= 1);
      // 5 s (±20 %) after the first failure: not before.
      h.clock.advance(3_000);
      await h.runtime.push.dispatcher.drain();
      expect(receiver.deliveries).toHaveLength(1);
      h.clock.advance(4_000);
      await h.runtime.push.dispatcher.drain();
      expect(receiver.deliveries).toHaveLength(2);
      // The receiver asked for 120 s: not at 100 s, at 120 s.
      h.clock.advance(100_000);
      await h.runtime.push.dispatcher.drain();
      expect(receiver.deliveries).toHaveLength(2);
      h.clock.advance(20_000);
      await h.runtime.push.dispatcher.drain();
      expect(receiver.deliveries).toHaveLength(3);
      expect(new Set(receiver.deliveries.map((d) => d.id)).size).toBe(1);
      expect(receiver.deliveries.map((d) => d.answeredStatus)).toEqual([500, 429, 200]);

      const attempts = await call('GET', `/v1/webhooks/${endpoint.id}/deliveries`);
      expect(attempts.statusCode).toBe(200);
      type Entry = { attempt: number; status_code: number; next_attempt_at: string | null; attempted_at: string; carrier: string; awb: string };
      const list = (attempts.json() as { deliveries: Entry[] }).deliveries;
      expect(list.map((a) => [a.attempt, a.status_code])).toEqual([[3, 200], [2, 429], [1, 500]]);
      expect(Date.parse(list[1]!.next_attempt_at!) - Date.parse(list[1]!.attempted_at)).toBe(120_000);
      expect(list[0]!.next_attempt_at).toBeNull();
      // Each entry names the shipment the event was about.
      expect(list.map((a) => [a.carrier, a.awb])).toEqual(Array(3).fill(['delhivery', awb]));
    });

    it('410 disables the endpoint and tells the owner; enabled again, it receives the kept events in order', async () => {
      const endpoint = await subscribe();
      receiver.respond(() => ({ status: 410 }));
      await watch('delhivery', awbFor('delhivery', 25));
      await pollRound();
      await receiver.waitFor(() => receiver.deliveries.length >= 1);
      const disabled = await call('GET', `/v1/webhooks/${endpoint.id}`);
      expect(disabled.json()).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
      if (store === 'embedded') {
        const outbox = join(h.dataDir, 'outbox');
        const mails = readdirSync(outbox).map((f) => readFileSync(join(outbox, f), 'utf8'));
        expect(mails.some((m) => m.includes(`Webhook endpoint ${endpoint.id} disabled`))).toBe(true);
      }
      // Events keep coming while it is disabled; none is attempted.
      await pollRound();
      await pollRound();
      expect(receiver.deliveries).toHaveLength(1);

      receiver.respond(() => ({ status: 204 }));
      const enabled = await call('POST', `/v1/webhooks/${endpoint.id}/enable`);
      expect(enabled.json()).toMatchObject({ status: 'enabled', disabled_reason: null });
      await h.runtime.push.dispatcher.drain();
      await receiver.waitFor(() => receiver.accepted().length >= 3);
      expect(receiver.accepted().map((d) => data(d).sequence)).toEqual([1, 2, 3]);
      expect(receiver.accepted()[0]!.id).toBe(receiver.deliveries[0]!.id);
    });

    it('rotation: during the overlap every delivery verifies with the old and with the new secret', async () => {
      const endpoint = await subscribe();
      const rotated = await call('POST', `/v1/webhooks/${endpoint.id}/rotate-secret`);
      expect(rotated.statusCode).toBe(200);
      const { secret } = rotated.json() as { secret: string };
      expect(secret).not.toBe(endpoint.secret);
      receiver.setSecrets([endpoint.secret, secret]);
      const test = await call('POST', `/v1/webhooks/${endpoint.id}/test`);
      expect(test.statusCode).toBe(202);
      await h.runtime.push.dispatcher.drain();
      await receiver.waitFor(() => receiver.deliveries.length >= 1);
      expect(receiver.deliveries[0]!.verifiedWith).toEqual([0, 1]);
      expect((receiver.deliveries[0]!.body as { type: string }).type).toBe('webhook.test');
      // After 24 h only the new secret signs.
      h.clock.advance(24 * 3_600_000 + 1_000);
      await call('POST', `/v1/webhooks/${endpoint.id}/test`);
      await h.runtime.push.dispatcher.drain();
      await receiver.waitFor(() => receiver.deliveries.length >= 2);
      expect(receiver.deliveries[1]!.verifiedWith).toEqual([1]);
    });

    it('resend delivers a kept event again with the same webhook-id; the endpoint list never shows secrets', async () => {
      const endpoint = await subscribe();
      await watch('delhivery', awbFor('delhivery', 25));
      await pollRound();
      await receiver.waitFor(() => receiver.accepted().length >= 1);
      const id = receiver.accepted()[0]!.id;
      const resent = await call('POST', `/v1/webhooks/${endpoint.id}/deliveries/${id}/resend`);
      expect(resent.statusCode, resent.body).toBe(202);
      await h.runtime.push.dispatcher.drain();
      await receiver.waitFor(() => receiver.accepted().length >= 2);
      expect(receiver.accepted()[1]!.id).toBe(id);
      expectError(await call('POST', `/v1/webhooks/${endpoint.id}/deliveries/evt_nothing/resend`), 404, 'not_found');
      const list = await call('GET', '/v1/webhooks');
      expect(list.body).not.toContain('whsec_');
      expect((list.json() as { webhooks: unknown[] }).webhooks).toHaveLength(1);
    });

    it('a live key cannot point at loopback (beyond the opened 127.0.0.1), private or metadata addresses, nor at plain http', async () => {
      const live = (await h.createKey({ mode: 'live', burst_per_second: 1000 })).key;
      for (const url of ['https://127.0.0.2/hook', 'https://10.0.0.7/hook', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/hook', 'https://2130706434/hook', 'http://example.com/hook']) {
        expectError(await call('POST', '/v1/webhooks', { url }, live), 400, 'invalid_url');
      }
      expectError(await call('POST', '/v1/webhooks', { url: 'http://10.1.1.1/hook' }), 400, 'invalid_url');
      expectError(await call('POST', '/v1/webhooks', { url: receiver.url, events: ['tracking.nope'] }), 400, 'bad_request');
      for (let i = 0; i < 10; i++) expect((await call('POST', '/v1/webhooks', { url: receiver.url })).statusCode).toBe(201);
      expectError(await call('POST', '/v1/webhooks', { url: receiver.url }), 409, 'too_many_endpoints');
    });

    it('a redirect is not followed: the attempt fails and the target is never asked', async () => {
      const endpoint = await subscribe();
      receiver.respond(() => ({ status: 302, headers: { location: `${receiver.url}/elsewhere` } }));
      await call('POST', `/v1/webhooks/${endpoint.id}/test`);
      await h.runtime.push.dispatcher.drain();
      await receiver.waitFor(() => receiver.deliveries.length >= 1);
      const list = (await call('GET', `/v1/webhooks/${endpoint.id}/deliveries`)).json() as { deliveries: { status_code: number; error: string }[] };
      // The receiver is a private target (loopback, opened by the operator): its redirect target is
      // not echoed to the key, only the status.
      expect(list.deliveries[0]).toMatchObject({ status_code: 302, error: 'HTTP 302' });
      expect(receiver.deliveries).toHaveLength(1);
    });

    it('a watch consumes exactly one lookup; watching again is free; 300 concurrent watches against 50 left make 50', async () => {
      const before = (await h.usage(key)).period.lookups_used;
      expect((await watch('delhivery', awbFor('delhivery', 2, 3))).statusCode).toBe(201);
      expect((await h.usage(key)).period.lookups_used).toBe(before + 1);
      const again = await watch('delhivery', awbFor('delhivery', 2, 3));
      expect(again.statusCode).toBe(200);
      expect((await h.usage(key)).period.lookups_used).toBe(before + 1);
      // A number with no scans yet is watched too (and consumes, as a 404 would).
      const unknown = await watch('delhivery', awbFor('delhivery', 0, 4));
      expect(unknown.statusCode).toBe(201);
      expect(unknown.json()).toMatchObject({ tracking: null });

      const small = (await h.createKey({ plan: 'starter', mode: 'test', lookups_limit: 50, burst_per_second: 1000, daily_quota: 1000 })).key;
      const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => watch('delhivery', `12345${String(i).padStart(4, '0')}0102`, small)));
      const codes = answers.map((a) => a.statusCode);
      expect(codes.filter((c) => c === 201)).toHaveLength(50);
      expect(codes.filter((c) => c === 429)).toHaveLength(250);
      expect((await h.usage(small)).period.lookups_used).toBe(50);
      const listed = await call('GET', '/v1/trackings?limit=100', undefined, small);
      expect((listed.json() as { watches: unknown[] }).watches).toHaveLength(50);
    });

    it('/openapi.json documents every push operation', async () => {
      const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId?: string }>> };
      const ids = Object.values(doc.paths).flatMap((p) => Object.values(p).map((op) => op.operationId)).filter(Boolean);
      for (const id of ['watch', 'listWatches', 'getWatch', 'deleteWatch', 'createWebhook', 'listWebhooks', 'getWebhook', 'deleteWebhook', 'rotateWebhookSecret', 'enableWebhook', 'testWebhook', 'listWebhookDeliveries', 'resendWebhookEvent']) {
        expect(ids).toContain(id);
      }
    });
  });
}
