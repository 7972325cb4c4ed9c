/**
 * Sandbox Ekart: `POST /v2/shipments/track` with `{"tracking_ids": [...] | "<id>"}` behind a bearer
 * token and a merchant code; answers a JSON object keyed by tracking id in the shape of Ekart's real
 * web-tracking answers (lib/carriers/ekart/adapter.ts): epoch-millisecond dates, `statusDetails`
 * oldest first, `{}` for unknown ids, in texts config/mappings/ekart.yaml maps.
 */
import { WEB_PINCODE_KEYS } from '../../carriers/ekart/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import type { SandboxRenderer, SandboxRoute, SandboxShipment, SandboxStep, ScenarioAnswer } from '../types.ts';
import { hasBearer, jsonReply as json, requestHeader, unavailableReply, withDetail } from './shared.ts';

const SANDBOX_CREDENTIAL = 'sandbox';

const ATTEMPT_REMARKS: Record<NdrReason, string> = {
  customer_unavailable: 'Customer not available',
  address_issue: 'Address incomplete, cannot deliver',
  refused: 'Customer refused to accept',
  premises_closed: 'Office/Institute closed',
  cod_not_ready: 'Payment not ready with customer',
  other: 'Not attempted',
};

/**
 * One step in the web tracking's `statusDetails` words ("Shipment Created", "Pickup From Seller"
 * are real; the rest are *unconfirmed*, in one place). A detail follows " - ".
 */
function statusDetails(step: SandboxStep): string {
  switch (step.kind) {
    case 'booked': return withDetail('Shipment Created', step.remark);
    case 'picked_up': return withDetail('Pickup From Seller', step.remark);
    case 'hub_in': return withDetail('Received At Facility', step.remark);
    case 'hub_out': return withDetail('Dispatched From Facility', step.remark);
    case 'bagged': return withDetail('Shipment Bagged', step.remark);
    case 'out_for_delivery': return withDetail('Out For Delivery', step.remark);
    case 'attempt_failed': return withDetail('Undelivered', step.remark ?? ATTEMPT_REMARKS[step.ndr ?? 'other']);
    case 'delivered': return withDetail('Delivered', step.remark);
    // A hold is "In Transit" whose detail tells of the hold (rules: exception, NDR other).
    case 'hold': return withDetail('In Transit', `Shipment on hold: ${step.remark ?? 'delay due to weather'}`);
    case 'rto_initiated': return withDetail('RTO Initiated', step.remark);
    case 'rto_in_transit': return withDetail('RTO In Transit', step.remark);
    case 'rto_delivered': return withDetail('RTO Completed', step.remark);
    case 'cancelled': return withDetail('Shipment Cancelled', step.remark);
    case 'lost': return withDetail('Shipment Lost', step.remark);
    case 'unmapped': return withDetail('Shipment Sent For Sanitisation', step.remark);
  }
}

/** The web tracking's entry: epoch-millisecond dates, cities, details oldest first (real excerpt). */
function entryOf(shipment: SandboxShipment) {
  return {
    expectedDeliveryDate: shipment.edd,
    sourceCity: shipment.origin.city.toUpperCase(),
    destinationCity: shipment.destination.city.toUpperCase(),
    [WEB_PINCODE_KEYS.origin]: shipment.origin.pincode,
    [WEB_PINCODE_KEYS.destination]: shipment.destination.pincode,
    // Oldest first as the story lists it; a shuffled story goes out as given.
    shipmentTrackingDetails: shipment.steps.map((step) => ({ date: step.at, city: step.location.toUpperCase(), statusDetails: statusDetails(step) })),
  };
}

function trackingIdsOf(body: string): string[] | null {
  try {
    const parsed = JSON.parse(body) as { tracking_ids?: unknown };
    // The web tracking sends one id as a string (real requests); the API a list.
    const ids = typeof parsed?.tracking_ids === 'string' && parsed.tracking_ids.trim() !== '' ? [parsed.tracking_ids.trim()] : parsed?.tracking_ids;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string')) return null;
    return ids as string[];
  } catch {
    return null;
  }
}

const trackRoute: SandboxRoute = {
  method: 'POST',
  path: '/v2/shipments/track',
  handle(req, _params, lookup) {
    if (!hasBearer(req, SANDBOX_CREDENTIAL)) {
      return json(401, { unauthorised: 'Invalid or expired token' });
    }
    if (requestHeader(req, 'http_x_merchant_code')?.trim() !== SANDBOX_CREDENTIAL) {
      return json(403, { forbidden: 'Invalid merchant code' });
    }
    const ids = trackingIdsOf(req.body);
    if (!ids) return json(400, { message: ['tracking_ids must be a non-empty list of tracking ids'] });

    const answers: [string, ScenarioAnswer][] = ids.map((id) => [id, lookup(id)]);
    if (answers.some(([, a]) => a.kind === 'down')) {
      return unavailableReply();
    }
    const body: Record<string, unknown> = {};
    for (const [id, a] of answers) {
      if (a.kind === 'shipment' || a.kind === 'slow') body[id] = entryOf(a.shipment);
      // A single unknown id answers `{}` (real body); among several, its entry is `{}`.
      else if (a.kind === 'not_found') { if (ids.length > 1) body[id] = {}; }
      else if (a.kind === 'malformed') body[id] = entryOf({
        carrier: 'ekart', awb: id, scenario: 19, lane: 0, origin: { city: 'Bangalore', state: 'Karnataka', pincode: '560001' },
        destination: { city: 'Pondicherry', state: 'Puducherry', pincode: '605001' }, bookedAt: 0, edd: null, weightGrams: 500, serviceType: 'surface',
        shuffled: false, steps: [],
      });
    }
    const text = JSON.stringify(body);
    // A malformed answer is cut off mid-way, as a dropped connection behind a proxy leaves it.
    return json(200, answers.some(([, a]) => a.kind === 'malformed') ? text.slice(0, Math.max(1, Math.floor(text.length * 0.6))) : text);
  },
};

export const renderer: SandboxRenderer = { slug: 'ekart', routes: [trackRoute] };
