/** Sandbox renderer → native answer → adapter → the product's normalization, for the adapter tests. */
import { expect } from 'vitest';
import type { SandboxRenderer, SandboxShipment } from '../../../lib/sandbox/types.ts';
import { PollShipmentSchema, RawScanSchema, requireAwb, type RawScan, type TrackingRecord } from '../../../lib/schemas/index.ts';
import { makePoll } from '../../../lib/testutil/polls.ts';
import { answer } from '../../../lib/testutil/product.ts';
import type { CarrierAdapter, CarrierEndpoint, NativeResponse, ParsedPoll } from '../../../lib/carriers/types.ts';
import { sandboxSend } from './sandbox-transport.ts';

export type OkPoll = Extract<ParsedPoll, { outcome: 'ok' }>;

export interface RoundTrip {
  response: NativeResponse;
  parsed: OkPoll;
  record: TrackingRecord;
}

/** The parsed poll, which must be ok with scans and header that are valid carrier_poll.v1 parts. */
export function expectOk(parsed: ParsedPoll): OkPoll {
  if (parsed.outcome !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(parsed)}`);
  for (const scan of parsed.scans) expect(RawScanSchema.safeParse(scan).success).toBe(true);
  if (parsed.shipment) expect(PollShipmentSchema.safeParse(parsed.shipment).success).toBe(true);
  return parsed;
}

/** Parses `response` with the adapter and normalizes it with the product's rules, as polled at `polledAtMs`. */
export function normalizeAnswer(adapter: CarrierAdapter, awb: string, response: NativeResponse, polledAtMs: number): RoundTrip {
  const parsed = expectOk(adapter.parse(requireAwb(awb), response));
  const poll = makePoll({ carrier: adapter.slug, awb, scans: parsed.scans, shipment: parsed.shipment, polled_at: new Date(polledAtMs).toISOString() });
  return { response, parsed, record: answer(poll) };
}

/** Fetches `shipment` through the adapter from the renderer's routes in process, then parses and normalizes it. */
export async function fetchAndNormalize(
  adapter: CarrierAdapter, renderer: SandboxRenderer, endpoint: CarrierEndpoint, shipment: SandboxShipment, polledAtMs: number,
): Promise<RoundTrip> {
  const send = sandboxSend(renderer, endpoint.baseUrl, () => ({ kind: 'shipment', shipment }));
  const response = await adapter.fetch(requireAwb(shipment.awb), endpoint, send);
  return normalizeAnswer(adapter, shipment.awb, response, polledAtMs);
}

/** The UTC instants of scans whose offset-less times are IST wall times. */
export function scanInstants(scans: RawScan[]): number[] {
  return scans.map((s) => Date.parse(`${s.occurred_at}+05:30`));
}

/**
 * What a record says about a shipment's story, apart from the words a carrier chose: status, stage,
 * each event's instant, code, status and NDR reason, milestones and attempts. The real-body round
 * trips compare a real answer's record with the sandbox's rendering of the same story by this.
 */
export function storyOf(record: TrackingRecord) {
  // Before pickup, carriers differ only in how they name the wait (order placed, awaiting pickup,
  // shipped): a reader says "not picked up yet" for all of them.
  const said = (status: string) => (['pending', 'order_placed', 'awaiting_pickup', 'shipped'].includes(status) ? 'before pickup' : status);
  return {
    status: said(record.status),
    stage: record.insights.current_stage,
    is_rto: record.is_rto,
    is_delivered: record.is_delivered,
    events: record.events.map((e) => ({ at: e.timestamp, code: e.code, status: said(e.status), reason: e.reason_code })),
    milestones: record.milestones,
    attempts: record.delivery_attempts.attempts.map((a) => ({ at: a.at, outcome: a.outcome, reason: a.reason_code })),
  };
}

/** Epoch ms of an IST wall time written `2017-06-21T15:30` (the real bodies' clock). */
export function istAt(wall: string): number {
  return Date.parse(`${wall}:00+05:30`);
}
