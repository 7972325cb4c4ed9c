/** Sandbox renderer → native answer → adapter → the product's normalization, for the adapter tests. */
import { expect } from 'vitest';
import type { SandboxRenderer, SandboxShipment } from '../../sandbox/types.ts';
import { PollShipmentSchema, RawScanSchema, type RawScan, type TrackingRecord } from '../../schemas/index.ts';
import { makePoll } from '../../testing/polls.ts';
import { answer } from '../../testing/product.ts';
import type { CarrierAdapter, CarrierEndpoint, NativeResponse, ParsedPoll } from '../types.ts';
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
  const parsed = expectOk(adapter.parse(awb, response));
  const poll = makePoll({ carrier: adapter.slug, awb, scans: parsed.scans, shipment: parsed.shipment, polled_at: new Date(polledAtMs).toISOString() });
  return { response, parsed, record: answer(poll) };
}

/** Fetches `shipment` through the adapter from the renderer's routes in process, then parses and normalizes it. */
export async function fetchAndNormalize(
  adapter: CarrierAdapter, renderer: SandboxRenderer, endpoint: CarrierEndpoint, shipment: SandboxShipment, polledAtMs: number,
): Promise<RoundTrip> {
  const send = sandboxSend(renderer, endpoint.baseUrl, () => ({ kind: 'shipment', shipment }));
  const response = await adapter.fetch(shipment.awb, endpoint, send);
  return normalizeAnswer(adapter, shipment.awb, response, polledAtMs);
}

/** The UTC instants of scans whose offset-less times are IST wall times. */
export function scanInstants(scans: RawScan[]): number[] {
  return scans.map((s) => Date.parse(`${s.occurred_at}+05:30`));
}
