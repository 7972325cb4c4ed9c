import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dispatcher, type DeliveryRow } from './dispatcher.ts';
import { EndpointStore, type EndpointDoc } from './endpoints.ts';
import { testEvent, type WebhookEvent } from './events.ts';
import { EmbeddedKv } from '../kv/index.ts';
import type { DeliveryOutcome, DeliveryRequest } from './sender.ts';
import { WebhookSender } from './sender.ts';
import { startReceiver, type Receiver, EVERY_KEY_ACTIVE } from './testutil/receiver.ts';
import { DAY_MS as DAY } from '../time/index.ts';
import { LOOPBACK_TARGETS } from './testutil/receiver.ts';

const PREFIX = 'trk_test_Ab3dE9x';

/** A tracking-like event of shipment `awb` with `sequence` (only the fields delivery reads). */
function eventOf(awb: string, sequence: number, createdMs: number): WebhookEvent {
  return {
    schema: 'webhook_event.v1', id: `evt_${awb}_${sequence}`, key_prefix: PREFIX, mode: 'test', type: 'tracking.updated',
    carrier: 'delhivery', awb, sequence, created_at: new Date(createdMs).toISOString(), body: JSON.stringify({ type: 'tracking.updated', data: { awb, sequence } }),
  };
}

describe('dispatcher', () => {
  let dir: string;
  let kv: EmbeddedKv;
  let now: number;
  let endpoints: EndpointStore;
  const receivers: Receiver[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'push-dispatch-'));
    now = Date.parse('2026-11-20T06:00:00.000Z');
    kv = new EmbeddedKv(dir, () => now);
    endpoints = new EndpointStore(kv, Date.now, { allowedTargets: LOOPBACK_TARGETS });
  });
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an endpoint failing every attempt for 3 days is disabled once and its owner told; given-up events let the next go', async () => {
    const { endpoint } = await endpoints.create(PREFIX, 'test', { url: 'http://127.0.0.1:9/hook' }, now);
    const sent: string[] = [];
    const disabled: { endpoint: EndpointDoc; reason: string }[] = [];
    const rows: DeliveryRow[] = [];
    const failing = { async send(request: DeliveryRequest): Promise<DeliveryOutcome> { sent.push(JSON.parse(request.body).data.sequence); return { statusCode: 503, latencyMs: 1, error: 'HTTP 503', retryAfterSeconds: null }; } };
    const dispatcher = new Dispatcher({ kv, endpoints, standing: EVERY_KEY_ACTIVE, sender: failing, clock: () => now, retrySchedule: [60, 60], onAttempt: (r) => rows.push(r), onDisabled: async (e, reason) => { disabled.push({ endpoint: e, reason }); } });
    await dispatcher.enqueue([eventOf('A1', 1, now), eventOf('A1', 2, now)]);
    await dispatcher.drain();
    for (let i = 0; i < 2; i++) {
      now += 60_000 * 1.21;
      await dispatcher.drain();
    }
    // Event 1: three attempts (the ladder has two waits), then given up; event 2 is tried at once.
    expect(sent).toEqual([1, 1, 1, 2]);
    expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3, 1]);
    expect((await endpoints.get(PREFIX, endpoint.id))?.status).toBe('enabled');
    // Failing on: once every attempt failed for 3 days, the endpoint is disabled, and told once.
    for (let hours = 0; hours < 80 && disabled.length === 0; hours++) {
      await dispatcher.enqueue([eventOf(`A${hours + 2}`, 1, now)]);
      await dispatcher.drain();
      now += 3_600_000;
    }
    expect((await endpoints.get(PREFIX, endpoint.id))?.status).toBe('disabled');
    expect(disabled.map((d) => d.reason)).toEqual(['failing']);
    const failingFor = Date.parse(rows.at(-1)!.attempted_at) - Date.parse(rows[0]!.attempted_at);
    expect(failingFor).toBeGreaterThanOrEqual(3 * DAY);
    expect(failingFor).toBeLessThan(3 * DAY + 2 * 3_600_000);
    // Disabled: nothing more is attempted, whatever the clock says.
    const attempts = sent.length;
    now += 10 * DAY;
    await dispatcher.drain();
    expect(sent).toHaveLength(attempts);
  });

  it('events of one shipment go in sequence order, whatever order they were queued in; a duplicate is queued once', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { secret } = await endpoints.create(PREFIX, 'test', { url: receiver.url }, now);
    receiver.setSecrets([secret]);
    const sender = new WebhookSender({ allowedTargets: LOOPBACK_TARGETS });
    const dispatcher = new Dispatcher({ kv, endpoints, standing: EVERY_KEY_ACTIVE, sender, clock: () => now });
    await dispatcher.enqueue([eventOf('B1', 2, now), eventOf('B1', 1, now), eventOf('B1', 1, now), eventOf('B1', 3, now)]);
    await dispatcher.drain();
    await receiver.waitFor((r) => r.accepted().length >= 3);
    expect(receiver.accepted().map((d) => (d.body as { data: { sequence: number } }).data.sequence)).toEqual([1, 2, 3]);
    // An older event arriving after its successors were delivered is not sent again.
    await dispatcher.enqueue([eventOf('B1', 2, now)]);
    await dispatcher.drain();
    expect(receiver.deliveries).toHaveLength(3);
    await sender.close();
  });

  it('a slow endpoint never delays another endpoint\'s deliveries', async () => {
    const slow = await startReceiver();
    const fast = await startReceiver();
    receivers.push(slow, fast);
    slow.respond(() => ({ status: 204, delayMs: 1_500 }));
    const a = await endpoints.create(PREFIX, 'test', { url: slow.url }, now);
    const b = await endpoints.create(PREFIX, 'test', { url: fast.url }, now);
    slow.setSecrets([a.secret]);
    fast.setSecrets([b.secret]);
    const sender = new WebhookSender({ connectionsPerEndpoint: 2, allowedTargets: LOOPBACK_TARGETS });
    // The real clock: the loop re-claims queues that waited for their endpoint's room.
    const dispatcher = new Dispatcher({ kv, endpoints, standing: EVERY_KEY_ACTIVE, sender, perEndpoint: 2 });
    // Twenty shipments: each endpoint has twenty queues, the slow one can take two at a time.
    await dispatcher.enqueue(Array.from({ length: 20 }, (_, i) => eventOf(`C${i}`, 1, now)));
    dispatcher.start();
    await fast.waitFor((r) => r.accepted().length >= 20, 5_000);
    expect(slow.accepted().length).toBeLessThanOrEqual(4);
    await dispatcher.stop();
    await sender.close();
  });

  it('a test event goes only to the endpoint tested', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const a = await endpoints.create(PREFIX, 'test', { url: receiver.url }, now);
    await endpoints.create(PREFIX, 'test', { url: `${receiver.url}/other` }, now);
    receiver.setSecrets([a.secret]);
    const sender = new WebhookSender({ allowedTargets: LOOPBACK_TARGETS });
    const dispatcher = new Dispatcher({ kv, endpoints, standing: EVERY_KEY_ACTIVE, sender, clock: () => now });
    await dispatcher.enqueue([testEvent(PREFIX, 'test', a.endpoint.id, 'evt_test_1', now)]);
    await dispatcher.drain();
    await receiver.waitFor((r) => r.deliveries.length >= 1);
    expect(receiver.deliveries.map((d) => d.id)).toEqual(['evt_test_1']);
    await sender.close();
  });
});
