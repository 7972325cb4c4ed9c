/**
 * Sandbox Ekart: `POST /v2/shipments/track` with `{"tracking_ids":[…]}` behind a bearer token and a
 * merchant code; answers a JSON object keyed by tracking id, history newest first, in raw statuses
 * config/mappings/ekart.yaml maps.
 */
import type { NdrReason } from '../../schemas/index.ts';
import { istParts } from '../ist.ts';
import type { SandboxPlace, SandboxRenderer, SandboxRoute, SandboxShipment, SandboxStep, ScenarioAnswer } from '../types.ts';
import { hasBearer, jsonReply as json, lastToFirst, requestHeader, unavailableReply } from './shared.ts';

const SANDBOX_CREDENTIAL = 'sandbox';

interface HistoryWords {
  status: string;
  /** Used when the step has no remark of its own. */
  description: string;
}

const ATTEMPT_REMARKS: Record<NdrReason, string> = {
  customer_unavailable: 'Customer not available',
  address_issue: 'Address incomplete, cannot deliver',
  refused: 'Customer refused to accept',
  premises_closed: 'Office/Institute closed',
  cod_not_ready: 'Payment not ready with customer',
  other: 'Not attempted',
};

function wordsFor(step: SandboxStep): HistoryWords {
  const at = step.location;
  switch (step.kind) {
    case 'booked': return { status: 'shipment_created', description: 'Shipment created' };
    case 'picked_up': return { status: 'shipment_picked_up', description: 'Shipment picked up from seller' };
    case 'hub_in': return { status: 'shipment_received_at_hub', description: `Shipment received at ${at}` };
    case 'hub_out': return { status: 'shipment_dispatched', description: `Shipment dispatched from ${at}` };
    case 'bagged': return { status: 'shipment_bagged', description: `Shipment bagged at ${at}` };
    case 'out_for_delivery': return { status: 'shipment_out_for_delivery', description: 'Shipment out for delivery' };
    case 'attempt_failed': return { status: 'shipment_undelivered_attempted', description: ATTEMPT_REMARKS[step.ndr ?? 'other'] };
    case 'delivered': return { status: 'shipment_delivered', description: 'Shipment delivered' };
    // A hold is an in-transit status whose description tells of the hold (rules: exception, NDR other).
    case 'hold': return { status: 'shipment_in_transit', description: `Shipment on hold: ${step.remark ?? 'delay due to weather'}` };
    case 'rto_initiated': return { status: 'rto_initiated', description: 'Return to origin initiated' };
    case 'rto_in_transit': return { status: 'rto_in_transit', description: `Return shipment in transit from ${at}` };
    case 'rto_delivered': return { status: 'rto_completed', description: 'Shipment returned to seller' };
    case 'cancelled': return { status: 'shipment_cancelled', description: 'Shipment cancelled by seller' };
    case 'lost': return { status: 'shipment_lost', description: 'Shipment lost in transit' };
    case 'unmapped': return { status: 'shipment_sent_for_sanitisation', description: 'Shipment sent for sanitisation' };
  }
}

/** The one place the sandbox writes Ekart times: "%Y-%m-%d %H:%M:%S" in IST (unconfirmed format). */
function ekartTime(ms: number): string {
  const p = istParts(ms);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

function place(p: SandboxPlace) {
  return { city: p.city, state: p.state, pincode: p.pincode };
}

function entryOf(shipment: SandboxShipment) {
  // Ekart lists newest first.
  const steps = lastToFirst(shipment);
  return {
    external_tracking_id: shipment.awb,
    expected_delivery_date: shipment.edd === null ? null : ekartTime(shipment.edd),
    source: place(shipment.origin),
    destination: place(shipment.destination),
    shipment_weight: shipment.weightGrams / 1000,
    history: steps.map((step) => {
      const words = wordsFor(step);
      return {
        status: words.status,
        public_description: step.remark ?? words.description,
        hub_name: step.location,
        event_date: ekartTime(step.at),
        city: step.location,
      };
    }),
  };
}

function trackingIdsOf(body: string): string[] | null {
  try {
    const parsed = JSON.parse(body) as { tracking_ids?: unknown };
    const ids = parsed?.tracking_ids;
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
      else if (a.kind === 'not_found') body[id] = { message: [`No shipment found for tracking id ${id}`] };
      else body[id] = { external_tracking_id: id, expected_delivery_date: null, history: [] };
    }
    const text = JSON.stringify(body);
    // A malformed answer is cut off mid-way, as a dropped connection behind a proxy leaves it.
    return json(200, answers.some(([, a]) => a.kind === 'malformed') ? text.slice(0, Math.max(1, Math.floor(text.length * 0.6))) : text);
  },
};

export const renderer: SandboxRenderer = { slug: 'ekart', routes: [trackRoute] };
