/**
 * Type-level test, compiled by `npm run typecheck` (never run): the generated types give every
 * answer its shape, so a push answer is not an empty object. A drift back to `{"type": "object"}`
 * bodies makes these lines fail to compile.
 */
import { createTrackingClient, type RunningLateEventBody, type TrackingRecord } from '../src/index.ts';

export async function typesCompile(): Promise<string[]> {
  const client = createTrackingClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'trk_test_x' });
  const out: string[] = [];

  const watched = await client.POST('/v1/trackings', { body: { carrier: 'delhivery', awb: '1234567890102' } });
  if (watched.data) {
    const carrier: string = watched.data.watch.carrier;
    const status: 'active' | 'ended' = watched.data.watch.status;
    const tracking: TrackingRecord | null = watched.data.tracking;
    out.push(carrier, status, tracking?.status ?? '');
    // @ts-expect-error a watch has no such field: the answer is typed, not {}
    out.push(watched.data.watch.no_such_field);
  }
  if (watched.error) out.push(watched.error.error.code);

  // A shop's promise: the watch's fields, the record's promise, the running_late event's data.
  const promised = await client.POST('/v1/trackings', { body: { carrier: 'delhivery', awb: '1234567890102', promised_by: '2026-11-28', running_late_below: 0.6 } });
  if (promised.data) {
    const day: string | null = promised.data.watch.promised_by;
    const threshold: number = promised.data.watch.running_late_below;
    const chance: number | undefined = promised.data.tracking?.insights.prediction?.promise?.on_time_probability;
    out.push(day ?? '', String(threshold), String(chance));
  }
  const late = {} as RunningLateEventBody;
  const lateFields: [string | null, number, string] = [late.data.promised_by, late.data.on_time_probability, late.data.delivery_date];
  out.push(String(lateFields));

  const created = await client.POST('/v1/webhooks', { body: { url: 'https://example.com/hooks' } });
  if (created.data) out.push(created.data.secret, created.data.id);

  const rotated = await client.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id: 'wh_x' } } });
  if (rotated.data) out.push(rotated.data.secret, rotated.data.previous_secret_valid_until);

  const listed = await client.GET('/v1/webhooks');
  if (listed.data) out.push(...listed.data.webhooks.map((w) => w.url));

  const deliveries = await client.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: 'wh_x' }, query: { limit: 10 } } });
  if (deliveries.data) out.push(...deliveries.data.deliveries.map((d) => d.event_id));

  const watches = await client.GET('/v1/trackings', { params: { query: { limit: 10 } } });
  if (watches.data) out.push(...watches.data.watches.map((w) => w.awb), watches.data.next_cursor ?? '');

  const usage = await client.GET('/v1/usage');
  if (usage.data) out.push(String(usage.data.period.lookups_remaining));

  const batch = await client.POST('/v1/track/batch', { body: { items: [{ awb: '1234567890102' }] } });
  if (batch.data) for (const r of batch.data.results) out.push('tracking' in r ? r.tracking.awb : r.error.code);

  const lanes = await client.GET('/v1/lanes/{origin_pincode}/{destination_pincode}', { params: { path: { origin_pincode: '110001', destination_pincode: '400001' } } });
  if (lanes.data) out.push(lanes.data.fastest ?? '');

  const track = await client.GET('/v1/track/{carrier}/{awb}', { params: { path: { carrier: 'delhivery', awb: '1234567890102' } } });
  if (track.data) out.push(track.data.insights.current_stage);
  return out;
}
