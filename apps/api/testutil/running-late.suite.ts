/**
 * A shop's promise through the API (contracts.md "Delivery prediction", "A shop's promise"), on
 * each state store (routes/running-late.test.ts: embedded; running-late.services.test.ts: Redis):
 * `promised_by` / `running_late_below` on POST /v1/trackings (checked: 400 in the standard error
 * body, nothing consumed, nothing stored), in the watch's answers, `insights.prediction.promise` on
 * the watch's records, and `tracking.running_late` delivered signed to an endpoint subscribed to
 * it alone, once. The model is learned from a seeded test-mode history of the sandbox network.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshPolicyOf, type RefreshTicks } from '../../../lib/poller/index.ts';
import { startReceiver, type Receiver } from '../../../lib/push/testutil/receiver.ts';
import type { TrackingRecord } from '../../../lib/schemas/index.ts';
import { addDays, istDayOf } from '../../../lib/time/ist-day.ts';
import { startRuntimePoller } from './poller.ts';
import { awbFor, expectError, startApiHarness, type ApiHarness, type StoreKind } from './harness.ts';
import { seedHistory } from './history.ts';

const INTERVAL_S = 7200;

interface LateBody {
  type: string;
  data: { awb: string; sequence: number; tracking: TrackingRecord; promised_by: string | null; on_time_probability: number; delivery_date: string };
}

export function runningLateApiSuite(store: StoreKind): void {
  describe(`a shop's promise and tracking.running_late (${store} store)`, () => {
    let h: ApiHarness;
    let receiver: Receiver;
    let poller: RefreshTicks;
    let key: string;

    beforeAll(async () => {
      h = await startApiHarness({ store });
      await seedHistory(h, { shipments: 3000, days: 60, seed: 7 });
      receiver = await startReceiver();
      poller = startRuntimePoller(h.runtime, h.clock.now, refreshPolicyOf(INTERVAL_S));
      key = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 })).key;
    }, 90_000);
    afterAll(async () => {
      await poller.stop();
      await receiver.close();
      await h.close();
    });

    const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      h.app.inject({ method, url, headers: { 'x-api-key': key }, ...(body === undefined ? {} : { payload: body as object }) });
    const used = async () => (await h.usage(key)).period.lookups_used;

    it('refuses a bad promise or threshold with 400 in the standard error body; nothing consumed, nothing stored', async () => {
      const awb = awbFor('delhivery', 2, 1);
      const before = await used();
      for (const promised_by of ['2026-02-30', '2026-13-01', '28-11-2026', 'tomorrow', '2026-11-28T00:00:00Z', 20261128, '']) {
        const error = expectError(await call('POST', '/v1/trackings', { carrier: 'delhivery', awb, promised_by }), 400, 'invalid_date');
        expect(error.message).toContain('promised_by');
      }
      for (const running_late_below of [1.5, -0.1, '0.5', true, 'high']) {
        const error = expectError(await call('POST', '/v1/trackings', { carrier: 'delhivery', awb, running_late_below }), 400, 'bad_request');
        expect(error.message).toContain('running_late_below');
      }
      expect(await used()).toBe(before);
      expectError(await call('GET', `/v1/trackings/delhivery/${awb}`), 404, 'not_found');
    });

    it('a watch shows its promise; its answer carries prediction.promise; watching again changes it for free', async () => {
      const today = istDayOf(h.clock.now());
      const awb = awbFor('delhivery', 2, 2);
      const created = await call('POST', '/v1/trackings', { carrier: 'delhivery', awb, promised_by: addDays(today, 10), running_late_below: 0.6 });
      expect(created.statusCode, created.body).toBe(201);
      const answer = created.json() as { watch: Record<string, unknown>; tracking: TrackingRecord };
      expect(answer.watch).toMatchObject({ carrier: 'delhivery', awb, status: 'active', promised_by: addDays(today, 10), running_late_below: 0.6 });
      const prediction = answer.tracking.insights.prediction;
      expect(prediction).not.toBeNull();
      // Ten days out is beyond nearly every delivery of the history.
      expect(prediction!.promise).toEqual({ promised_by: addDays(today, 10), on_time_probability: expect.any(Number) });
      expect(prediction!.promise!.on_time_probability).toBeGreaterThan(0.9);
      expect(await call('GET', `/v1/trackings/delhivery/${awb}`).then((r) => r.json())).toMatchObject({ watch: { promised_by: addDays(today, 10), running_late_below: 0.6 } });
      const listed = (await call('GET', '/v1/trackings').then((r) => r.json()) as { watches: { awb: string; promised_by: string | null }[] }).watches;
      expect(listed.find((w) => w.awb === awb)).toMatchObject({ promised_by: addDays(today, 10), running_late_below: 0.6 });

      // Again with yesterday: nothing consumed, the watch and its record say the new promise (already missed: 0).
      const before = await used();
      const again = await call('POST', '/v1/trackings', { carrier: 'delhivery', awb, promised_by: addDays(today, -1) });
      expect(again.statusCode, again.body).toBe(200);
      expect(await used()).toBe(before);
      const changed = again.json() as { watch: Record<string, unknown>; tracking: TrackingRecord };
      expect(changed.watch).toMatchObject({ promised_by: addDays(today, -1), running_late_below: 0.6 });
      expect(changed.tracking.insights.prediction!.promise).toEqual({ promised_by: addDays(today, -1), on_time_probability: 0 });
      // Null clears it: no promise on the record.
      const cleared = (await call('POST', '/v1/trackings', { carrier: 'delhivery', awb, promised_by: null }).then((r) => r.json())) as { watch: Record<string, unknown>; tracking: TrackingRecord };
      expect(cleared.watch).toMatchObject({ promised_by: null, running_late_below: 0.6 });
      expect(cleared.tracking.insights.prediction!.promise).toBeUndefined();
      // A watch made without them: no promise, the default threshold; a plain lookup never carries one.
      const plain = await call('POST', '/v1/trackings', { carrier: 'delhivery', awb: awbFor('delhivery', 2, 3) });
      expect((plain.json() as { watch: unknown }).watch).toMatchObject({ promised_by: null, running_late_below: 0.5 });
      expect(((await h.track(key, 'delhivery', awb)).json() as TrackingRecord).insights.prediction!.promise).toBeUndefined();
    });

    it('tracking.running_late: delivered signed once to an endpoint subscribed to it alone, with the promise, probability and day', async () => {
      const sub = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['tracking.running_late'] });
      expect(sub.statusCode, sub.body).toBe(201);
      const secret = (sub.json() as { secret: string }).secret;
      receiver.setSecrets([secret]);
      const today = istDayOf(h.clock.now());
      // Scenario 02 stays in transit. Promised for yesterday: already missed (probability 0).
      const awb = awbFor('delhivery', 2, 4);
      const watched = await call('POST', '/v1/trackings', { carrier: 'delhivery', awb, promised_by: addDays(today, -1) });
      expect(watched.statusCode, watched.body).toBe(201);
      for (let round = 0; round < 4; round++) {
        h.clock.advance(INTERVAL_S * 1000);
        // A tick polls its share of the watched shipments: enough ticks poll every one.
        for (let t = 0; t < 4; t++) await poller.tick();
        await h.runtime.bus.flush();
        await h.runtime.push.dispatcher.drain();
      }
      await receiver.waitFor((r) => r.accepted().length >= 1);
      const late = receiver.accepted().filter((d) => (d.body as LateBody).data.awb === awb);
      // Once, however many polls repeat it; the other watches' other events never reach this endpoint.
      expect(late).toHaveLength(1);
      expect(receiver.accepted().every((d) => (d.body as LateBody).type === 'tracking.running_late')).toBe(true);
      const body = late[0]!.body as LateBody;
      expect(new Webhook(secret).verify(late[0]!.rawBody, late[0]!.headers)).toEqual(body);
      expect(body.data).toMatchObject({ awb, promised_by: addDays(today, -1), on_time_probability: 0 });
      expect(body.data.delivery_date).toBe(body.data.tracking.insights.prediction!.delivery_date);
      expect(body.data.tracking.insights.prediction!.promise).toEqual({ promised_by: addDays(today, -1), on_time_probability: 0 });
      expect(Object.keys(body.data)).toEqual(['carrier', 'awb', 'sequence', 'previous', 'new_events', 'tracking', 'promised_by', 'on_time_probability', 'delivery_date']);
    }, 60_000);
  });
}
