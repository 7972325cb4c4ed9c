/**
 * Sandbox Professional Couriers: `GET /TrackMobDe.ashx?podno=<cn>` (public, no credentials),
 * answering CRLF plain text newest first, one block per scan, in Activity texts
 * config/mappings/professionalcouriers.yaml maps.
 */
import type { NdrReason } from '../../schemas/index.ts';
import { istParts } from '../ist.ts';
import type { SandboxReply, SandboxRenderer, SandboxRoute, SandboxShipment, SandboxStep } from '../types.ts';
import { lastToFirst, withDetail } from './shared.ts';

const CRLF = '\r\n';
const HEADER = 'Forwarding Details :';

/** The branch writes the failure reason into the Activity; address problems have their own text. */
const ATTEMPT_ACTIVITY: Record<NdrReason, string> = {
  customer_unavailable: 'Undelivered - Consignee not available - Area',
  address_issue: 'Address Improper - Area',
  refused: 'Undelivered - Consignee refused to accept - Area',
  premises_closed: 'Undelivered - Door Locked - Area',
  cod_not_ready: 'Undelivered - Payment not ready - Area',
  other: 'Undelivered - Not attempted - Area',
};

/** Where a despatch goes: the next place the story visits, else the end of the leg. */
function nextPlace(step: SandboxStep, shipment: SandboxShipment, fallback: string): string {
  const later = shipment.steps.filter((s) => s.at > step.at && s.location !== step.location).sort((a, b) => a.at - b.at);
  return later[0]?.location ?? fallback;
}

function activityOf(step: SandboxStep, shipment: SandboxShipment): string {
  const at = step.location;
  switch (step.kind) {
    case 'booked': return withDetail(`Booked at ${at}`, step.remark);
    case 'picked_up': return withDetail(`Picked up from shipper at ${at}`, step.remark);
    case 'hub_in': return withDetail(`Received at ${at}`, step.remark);
    case 'hub_out': return withDetail(`Despatched to ${nextPlace(step, shipment, shipment.destination.city)}`, step.remark);
    case 'bagged': return withDetail(`Bag Despatched to ${nextPlace(step, shipment, shipment.destination.city)}`, step.remark);
    case 'out_for_delivery': return withDetail('outfordelivery: Out for Delivery - Area', step.remark);
    case 'attempt_failed':
      return step.remark ? `Undelivered - ${step.remark} - Area` : ATTEMPT_ACTIVITY[step.ndr ?? 'other'];
    case 'delivered': return withDetail('delivered: Delivered - Area', step.remark);
    case 'hold': return `Held at ${at} - ${step.remark ?? 'Delayed due to heavy rain'}`;
    case 'rto_initiated': return withDetail('RTO - Return to Shipper', step.remark);
    case 'rto_in_transit': return withDetail(`RTO - Despatched to ${nextPlace(step, shipment, shipment.origin.city)}`, step.remark);
    case 'rto_delivered': return withDetail('Delivered to Shipper', step.remark);
    case 'cancelled': return withDetail('Booking Cancelled', step.remark);
    case 'lost': return withDetail('Consignment Lost', step.remark);
    case 'unmapped': return withDetail('Shipment sent for sanitisation', step.remark);
  }
}

/** The one place the sandbox writes this carrier's times: `DD/MM/YYYY    Time : HH:MM:SS` in IST. */
function dateLine(ms: number): string {
  const p = istParts(ms);
  return `${p.day}/${p.month}/${p.year}    Time : ${p.hour}:${p.minute}:${p.second}`;
}

/** The first layout: City and WayNo share a line. */
function blockOf(step: SandboxStep, shipment: SandboxShipment): string {
  return [
    dateLine(step.at),
    `City : ${step.location}   WayNo : ${shipment.awb}`,
    `Activity : ${activityOf(step, shipment)}`,
    `Pieces : 1   Weight : ${shipment.weightGrams / 1000}`,
  ].join(CRLF);
}

/** The second layout: two-space indents with trailing spaces, City and WayNo on lines of their own. */
function indentedBlockOf(step: SandboxStep, shipment: SandboxShipment): string {
  return [
    `  ${dateLine(step.at)}  `,
    `  City : ${step.location}  `,
    `  WayNo : ${shipment.awb}  `,
    `  Activity : ${activityOf(step, shipment)}  `,
    `  Pieces : 1   Weight : ${shipment.weightGrams / 1000}  `,
  ].join(CRLF);
}

/** Both layouts occur (carrier-formats.md, corrections): odd lanes get the second, with its status line first. */
export function usesSecondLayout(shipment: SandboxShipment): boolean {
  return shipment.lane % 2 === 1;
}

function trackText(shipment: SandboxShipment): string {
  // Newest first.
  const steps = lastToFirst(shipment);
  if (!usesSecondLayout(shipment)) return `${HEADER}${CRLF}${CRLF}${steps.map((step) => blockOf(step, shipment)).join(CRLF + CRLF)}${CRLF}`;
  const status = steps[0] ? activityOf(steps[0], shipment) : 'Booked';
  return `  ${status}  ${CRLF}${CRLF}  ${HEADER}  ${CRLF}${CRLF}${steps.map((step) => indentedBlockOf(step, shipment)).join(CRLF + CRLF)}${CRLF}`;
}

function text(status: number, body: string): SandboxReply {
  return { status, contentType: 'text/plain; charset=utf-8', body };
}

const trackRoute: SandboxRoute = {
  method: 'GET',
  path: '/TrackMobDe.ashx',
  handle(req, _params, lookup) {
    const podno = req.query.podno?.trim();
    if (!podno) return text(400, 'podno is required');
    const answer = lookup(podno);
    switch (answer.kind) {
      case 'not_found': return text(200, `${HEADER}${CRLF}`);
      case 'down':
        return {
          status: 503,
          contentType: 'text/html',
          body: '<html><head><title>Service Unavailable</title></head><body><h2>Service Unavailable</h2><p>HTTP Error 503. The service is ' +
            'unavailable.</p></body></html>',
        };
      // The text stops mid-way through a date line, as a dropped connection leaves it.
      case 'malformed': return text(200, `${HEADER}${CRLF}${CRLF}19/11/2026    Ti`);
      case 'shipment':
      case 'slow':
        return text(200, trackText(answer.shipment));
    }
  },
};

export const renderer: SandboxRenderer = { slug: 'professionalcouriers', routes: [trackRoute] };
