/**
 * Push respects a key's life and the network's edge (issue 20), on both state stores: one test per
 * finding of the hostile-client round. Each failed on the main of 2026-11-26 before the fix.
 * Deliveries go over real HTTP to a loopback receiver (opened by the harness as an operator would:
 * WEBHOOK_ALLOWED_TARGETS=127.0.0.1/32) that verifies them with the `standardwebhooks` package.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refreshPolicyOf, type RefreshTicks } from '../../../lib/poller/index.ts';
import { HOUR_MS } from '../../../lib/time/index.ts';
import { startReceiver, type Receiver } from '../../../lib/push/testutil/receiver.ts';
import { startRuntimePoller } from './poller.ts';
import { awbFor, DEFAULT_START, expectError, startApiHarness, type ApiHarness, type HarnessOptions, type StoreKind } from './harness.ts';

const INTERVAL_S = 7200;


export function keyStandingSuite(store: StoreKind): void {
  describe(`push and key standing (${store} store)`, () => {
    let h: ApiHarness;
    let receiver: Receiver;
    let poller: RefreshTicks;
    let key: string;
    let prefix: string;

    async function start(options: HarnessOptions = {}, keyEnd?: string): Promise<void> {
      h = await startApiHarness({ store, ...options });
      receiver = await startReceiver();
      poller = startRuntimePoller(h.runtime, h.clock.now, refreshPolicyOf(INTERVAL_S));
      const created = await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000, ...(keyEnd ? { period_end: keyEnd } : {}) });
      key = created.key;
      prefix = created.key_prefix;
    }
    afterEach(async () => {
      await poller?.stop();
      await receiver?.close();
      await h?.close();
    });

    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, apiKey: string | null = key) =>
      h.app.inject({ method, url, headers: apiKey === null ? {} : { 'x-api-key': apiKey }, ...(body === undefined ? {} : { payload: body as object }) });
    const admin = (action: 'suspend' | 'resume' | 'revoke' | 'renew') => h.admin('POST', `/admin/keys/${prefix}/${action}`, action === 'renew' ? {} : undefined);

    async function subscribe(): Promise<string> {
      const res = await call('POST', '/v1/webhooks', { url: receiver.url });
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json() as { id: string; secret: string };
      receiver.setSecrets([body.secret]);
      return body.id;
    }

    async function pollRound(): Promise<void> {
      h.clock.advance(INTERVAL_S * 1000);
      await poller.tick();
      await h.runtime.bus.flush();
      await h.runtime.push.dispatcher.drain();
    }

    const trackingEvents = () => receiver.accepted().filter((d) => (d.body as { type: string }).type.startsWith('tracking.'));
    const sequenceOf = (d: { body: unknown }) => (d.body as { data: { sequence: number } }).data.sequence;

    describe('finding 1: an inactive key gets no polls and no events', () => {
      beforeEach(() => start());

      it('suspended: its watch is not polled and makes no event; resumed, one event with everything that changed', async () => {
        await subscribe();
        const awb = awbFor('delhivery', 25);
        expect((await call('POST', '/v1/trackings', { carrier: 'delhivery', awb })).statusCode).toBe(201);
        await pollRound();
        await receiver.waitFor(() => trackingEvents().length >= 1);
        expect((await admin('suspend')).statusCode).toBe(200);
        const push = h.runtime.push;
        // The watch asks the poller for nothing. (The shipment itself is still refreshed as every
        // recently looked-up shipment is, for the cache: its polls make no event for this key.)
        expect(await push.watches.pollable(h.clock.now() + INTERVAL_S * 1000, push.standing)).toEqual([]);
        for (let round = 0; round < 3; round++) await pollRound();
        expect(trackingEvents()).toHaveLength(1);

        // Resumed: one event at once for everything that changed while suspended (the stages in
        // between are not replayed). The shipment was delivered meanwhile, so no poll would come.
        expect((await admin('resume')).statusCode).toBe(200);
        await push.dispatcher.drain();
        await receiver.waitFor(() => trackingEvents().length >= 2);
        expect(trackingEvents().map(sequenceOf)).toEqual([1, 2]);
        const caughtUp = trackingEvents()[1]!.body as { type: string; data: { new_events: unknown[]; tracking: { awb: string } } };
        expect(caughtUp.type).toBe('tracking.delivered');
        expect(caughtUp.data.tracking.awb).toBe(awb);
        expect(caughtUp.data.new_events.length).toBeGreaterThan(1);
      });

      it('events queued before a suspension are held, and sent on resume', async () => {
        await subscribe();
        receiver.respond(() => ({ status: 500 }));
        expect((await call('POST', '/v1/trackings', { carrier: 'delhivery', awb: awbFor('delhivery', 25) })).statusCode).toBe(201);
        await pollRound();
        await receiver.waitFor(() => receiver.deliveries.length >= 1);
        expect(trackingEvents()).toHaveLength(0);
        expect((await admin('suspend')).statusCode).toBe(200);
        receiver.respond(() => ({ status: 204 }));
        // Well past every retry: nothing is sent for the suspended key.
        h.clock.advance(2 * HOUR_MS);
        await h.runtime.push.dispatcher.drain();
        expect(receiver.deliveries).toHaveLength(1);

        expect((await admin('resume')).statusCode).toBe(200);
        await h.runtime.push.dispatcher.drain();
        await receiver.waitFor(() => trackingEvents().length >= 1);
        expect(trackingEvents().map(sequenceOf)).toEqual([1]);
      });

      it('revoked: watches, endpoints and queued events are dropped, nothing is polled or sent', async () => {
        const endpoint = await subscribe();
        receiver.respond(() => ({ status: 500 }));
        const awb = awbFor('delhivery', 25);
        expect((await call('POST', '/v1/trackings', { carrier: 'delhivery', awb })).statusCode).toBe(201);
        await pollRound();
        await receiver.waitFor(() => receiver.deliveries.length >= 1);
        expect((await admin('revoke')).statusCode).toBe(200);
        receiver.respond(() => ({ status: 204 }));

        const push = h.runtime.push;
        expect(await push.endpoints.list(prefix)).toEqual([]);
        expect(await push.endpoints.get(prefix, endpoint)).toBeNull();
        expect((await push.watches.list(prefix, h.clock.now(), { limit: 100 })).items).toEqual([]);
        expect(await push.watches.pollable(h.clock.now() + INTERVAL_S * 1000, push.standing)).toEqual([]);
        for (let round = 0; round < 3; round++) await pollRound();
        expect(receiver.deliveries).toHaveLength(1);
        expectError(await call('GET', '/v1/webhooks'), 401, 'invalid_api_key');
      });
    });

    describe('finding 2: a key past its period is refused on every /v1/ call but usage', () => {
      it('402 for watch, webhooks, lists and detection; usage answers; its watch is paused until renewal', async () => {
        const end = new Date(Date.parse(DEFAULT_START) + 3 * HOUR_MS).toISOString();
        await start({}, end);
        await subscribe();
        const awb = awbFor('delhivery', 25);
        expect((await call('POST', '/v1/trackings', { carrier: 'delhivery', awb })).statusCode).toBe(201);
        await pollRound();
        await receiver.waitFor(() => trackingEvents().length >= 1);

        // Past period.end now (the poll round moved the clock 2 h, this 2 h more).
        h.clock.advance(2 * HOUR_MS);
        expectError(await call('POST', '/v1/trackings', { carrier: 'delhivery', awb }), 402, 'payment_required');
        expectError(await call('POST', '/v1/webhooks', { url: receiver.url }), 402, 'payment_required');
        expectError(await call('GET', '/v1/webhooks'), 402, 'payment_required');
        expectError(await call('GET', '/v1/trackings'), 402, 'payment_required');
        expectError(await call('GET', `/v1/trackings/delhivery/${awb}`), 402, 'payment_required');
        expectError(await call('GET', `/v1/carriers/detect/${awb}`), 402, 'payment_required');
        expectError(await call('POST', '/v1/track/batch', { items: [{ carrier: 'delhivery', awb }] }), 402, 'payment_required');
        expect((await call('GET', '/v1/usage')).statusCode).toBe(200);

        const push = h.runtime.push;
        expect(await push.watches.pollable(h.clock.now() + INTERVAL_S * 1000, push.standing)).toEqual([]);
        await pollRound();
        expect(trackingEvents()).toHaveLength(1);

        // Renewed: what changed while it was past its period is one event at once, then polls go on.
        expect((await admin('renew')).statusCode).toBe(200);
        await push.dispatcher.drain();
        await receiver.waitFor(() => trackingEvents().length >= 2);
        expect(trackingEvents().map(sequenceOf)).toEqual([1, 2]);
        expect(await push.watches.pollable(h.clock.now() + INTERVAL_S * 1000, push.standing)).toMatchObject([{ carrier: 'delhivery', awb }]);
      });
    });

    describe('finding 3: a free trial key cannot point the dispatcher at this machine', () => {
      it('loopback in any spelling is refused for trk_test_ keys when the operator opened nothing', async () => {
        await start({ env: { WEBHOOK_ALLOWED_TARGETS: '' } });
        for (const url of [
          'http://127.0.0.1:6379/', 'http://localhost:8123/?query=SELECT%201', 'http://[::1]:9092/', 'http://2130706433:8123/',
          'http://0x7f.1/', 'http://127.1:6380/', 'http://[::ffff:127.0.0.1]:8123/', 'http://api.localhost/', 'http://10.0.0.5/',
        ]) {
          const error = expectError(await call('POST', '/v1/webhooks', { url }), 400, 'invalid_url');
          expect(error.message, url).toMatch(/public|loopback|not a public host/);
        }
        expect((await call('GET', '/v1/webhooks')).json()).toEqual({ webhooks: [] });
        expect(receiver.deliveries).toHaveLength(0);
      });
    });

    describe('finding 4: endpoint names are resolved when they are created', () => {
      it('a live key naming a host that resolves to loopback or a private address is refused at once', async () => {
        const names: Record<string, string[]> = { '127.0.0.1.nip.io': ['127.0.0.1'], 'inside.example.com': ['8.8.8.8', '10.1.2.3'], 'hooks.example.com': ['8.8.8.8'] };
        await start({ env: { WEBHOOK_ALLOWED_TARGETS: '' }, webhookLookup: async (host) => names[host] ?? [] });
        const live = (await h.createKey({ mode: 'live', burst_per_second: 1000 })).key;
        const refused = expectError(await call('POST', '/v1/webhooks', { url: 'https://127.0.0.1.nip.io/' }, live), 400, 'invalid_url');
        expect(refused.message).toBe('refused: 127.0.0.1.nip.io resolves to 127.0.0.1, a loopback address');
        expectError(await call('POST', '/v1/webhooks', { url: 'https://inside.example.com/hook' }, live), 400, 'invalid_url');
        expect((await call('POST', '/v1/webhooks', { url: 'https://hooks.example.com/hook' }, live)).statusCode).toBe(201);
      });
    });

    describe('finding 5: body values are read through schemas, never coerced', () => {
      beforeEach(() => start());

      it('{"carrier": {"toString": 1}} is a 401 without a key and a 400 with one, never a 500', async () => {
        const hostile = { carrier: { toString: 1 }, awb: awbFor('delhivery', 2) };
        expectError(await call('POST', '/v1/trackings', hostile, null), 401, 'missing_api_key');
        expectError(await call('POST', '/v1/trackings', hostile), 400, 'unsupported_carrier');
        expectError(await call('POST', '/v1/trackings', { carrier: 'delhivery', awb: { toString: 1 } }), 400, 'invalid_awb');
        expectError(await call('POST', '/v1/webhooks', { url: { toString: 1 } }), 400, 'invalid_url');
        const batch = await call('POST', '/v1/track/batch', { items: [hostile, { carrier: 'delhivery', awb: { valueOf: 1 } }] });
        expect(batch.statusCode, batch.body).toBe(200);
        expect((batch.json() as { results: { status: number; error: { code: string } }[] }).results.map((r) => [r.status, r.error.code]))
          .toEqual([[400, 'unsupported_carrier'], [400, 'invalid_awb']]);
        expect((await h.usage(key)).period.lookups_used).toBe(0);
      });
    });
  });
}
