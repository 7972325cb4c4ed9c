/**
 * Sandbox Shadowfax: `GET /api/v4/clients/orders/:awb/track/` behind DRF token auth, answering
 * JSON `order_details` + `tracking_details[]` oldest first, in status_ids config/mappings/shadowfax.yaml maps.
 */
import type { NdrReason } from '../../schemas/index.ts';
import { istIsoLocal } from '../ist.ts';
import type { SandboxPlace, SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer } from '../types.ts';
import { drfTokenRejection, jsonReply as json, unavailableReply } from './shared.ts';

const SANDBOX_TOKEN = 'sandbox';

interface ScanWords {
  status: string;
  statusId: string;
  /** Used when the step has no remark of its own ('' is how the carrier writes "none"). */
  remark: string;
}

/** Failed attempts: `na` is the customer-not-available code, `cid` (customer issue) covers the rest. */
const ATTEMPT_WORDS: Record<NdrReason, ScanWords> = {
  customer_unavailable: { status: 'Customer not available', statusId: 'na', remark: 'Customer not available' },
  address_issue: { status: 'Customer issue', statusId: 'cid', remark: 'Bad/Incomplete Address' },
  refused: { status: 'Customer issue', statusId: 'cid', remark: 'Customer refused to accept' },
  premises_closed: { status: 'Customer issue', statusId: 'cid', remark: 'Office/Institute closed' },
  cod_not_ready: { status: 'Customer issue', statusId: 'cid', remark: 'Payment not ready with customer' },
  other: { status: 'Customer issue', statusId: 'cid', remark: 'Not attempted' },
};

function wordsFor(step: SandboxStep): ScanWords {
  switch (step.kind) {
    case 'booked': return { status: 'New', statusId: 'new', remark: '' };
    case 'picked_up': return { status: 'Picked', statusId: 'picked', remark: '' };
    case 'hub_in': return { status: 'Received at Forward Hub', statusId: 'recd_at_fwd_hub', remark: '' };
    case 'hub_out': return { status: 'Bag in transit', statusId: 'bag_in_transit', remark: '' };
    // Shadowfax has no bagging status of its own: a bag is reported when it moves.
    case 'bagged': return { status: 'Item added to Bag', statusId: 'item_manifested', remark: 'Item added to bag' };
    case 'out_for_delivery': return { status: 'Out for delivery', statusId: 'ofd', remark: '' };
    case 'attempt_failed': return ATTEMPT_WORDS[step.ndr ?? 'other'];
    case 'delivered': return { status: 'Delivered', statusId: 'delivered', remark: '' };
    case 'hold': return { status: 'On hold', statusId: 'on_hold', remark: 'Delay due to weather' };
    case 'rto_initiated': return { status: 'RTS', statusId: 'rts', remark: 'Return to seller initiated' };
    case 'rto_in_transit': return { status: 'RTS in process', statusId: 'rts_in_process', remark: '' };
    case 'rto_delivered': return { status: 'RTS delivered', statusId: 'rts_d', remark: '' };
    case 'cancelled': return { status: 'Cancelled by customer', statusId: 'cancelled_by_customer', remark: 'Order cancelled by seller' };
    case 'lost': return { status: 'Lost', statusId: 'lost', remark: '' };
    case 'unmapped': return { status: 'Shipment sent for sanitisation', statusId: 'sent_for_sanitisation', remark: '' };
  }
}

/** Shadowfax writes `created` in UTC with a `Z`, whole seconds (real bodies). */
function shadowfaxTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The promised date is a calendar day (IST). */
function shadowfaxDay(ms: number): string {
  return istIsoLocal(ms).slice(0, 10);
}

function place(p: SandboxPlace) {
  return { city: p.city, state: p.state, pincode: p.pincode };
}

function trackBody(shipment: SandboxShipment): string {
  const details = shipment.steps.map((step) => {
    const words = wordsFor(step);
    return {
      status: words.status,
      status_id: words.statusId,
      location: step.location,
      created: shadowfaxTime(step.at),
      remarks: step.remark ?? words.remark,
      awb_number: shipment.awb,
    };
  });
  // Shadowfax lists oldest first, which is the steps' own order; shuffled steps go out as given.
  const latest = shipment.steps.reduce<SandboxStep | undefined>((a, b) => (a && a.at > b.at ? a : b), undefined);
  const latestWords = latest ? wordsFor(latest) : { status: 'New', statusId: 'new' };
  // The real shape: `data[]` of orders, each with its own rows.
  return JSON.stringify({
    message: 'Success',
    data: [{
      id: 2873563,
      client_order_id: `SBX-${shipment.awb}`,
      awb_number: shipment.awb,
      payment_mode: 'prepaid',
      order_date: shadowfaxDay(shipment.bookedAt),
      promised_delivery_date: shipment.edd === null ? null : `${shadowfaxDay(shipment.edd)}T23:59:59`,
      status_display: latestWords.status,
      status: latestWords.statusId,
      pickup_details: { name: '', contact: '', address_line_1: '', ...place(shipment.origin), latitude: null, longitude: null },
      delivery_details: { name: '', contact: '', address_line_1: '', ...place(shipment.destination), latitude: null, longitude: null },
      weight: shipment.weightGrams / 1000,
      tracking_details: details,
    }],
  });
}

const trackRoute: SandboxRoute = {
  method: 'GET',
  path: '/api/v4/clients/orders/:awb/track/',
  handle(req, params, lookup) {
    const rejection = drfTokenRejection(req, SANDBOX_TOKEN);
    if (rejection) return rejection;

    const answer = lookup(params.awb ?? '');
    switch (answer.kind) {
      case 'not_found': return json(404, { detail: 'Not found.' });
      case 'down': return unavailableReply('503 Service Unavailable');
      case 'malformed': {
        const sample = '{"message":"Success","data":[{"id":2873563,"status":"ofd","status_display":"Out For ' +
          'Delivery","tracking_details":[{"created":"2024-04-05T10:29:08Z","status_id":"new","location":"';
        return json(200, sample);
      }
      case 'shipment':
      case 'slow':
        return json(200, trackBody(answer.shipment));
    }
  },
};

export const renderer: SandboxRenderer = { slug: 'shadowfax', routes: [trackRoute] };
