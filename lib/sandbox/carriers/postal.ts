/**
 * The sandbox side of India Post's tracking API, shared by India Post and Speed Post: a login call
 * issuing a bearer token, then `GET /v1/tracking/:article` answering the postal JSON feed (newest
 * scan first, dates dressed as UTC midnight with the IST time apart, labels with trailing spaces).
 */
import { istParts } from '../ist.ts';
import type { SandboxReply, SandboxRenderer, SandboxRoute, SandboxShipment, SandboxStep, ScenarioAnswer } from '../types.ts';
import { hasBearer, jsonReply as json, lastToFirst, unavailableReply, withDetail } from './shared.ts';

/** What differs between the two postal services. */
export interface PostalStyle {
  slug: string;
  /** The booking event as this service's feed writes it at `office`. */
  bookingEvent(office: string): string;
  /** `booking_details.article_type` for the shipment. */
  articleType(shipment: SandboxShipment): string;
}

const SANDBOX_CREDENTIAL = 'sandbox';
/** The sandbox issues one fixed token: routes stay stateless. */
export const SANDBOX_POSTAL_TOKEN = 'sandbox-postal-access-token';
const TOKEN_LIFETIME_S = 3600;

// ---------------------------------------------------------------- the feed's vocabulary

/** Failed-attempt details written when the scenario gives no remark. */
const ATTEMPT_DETAIL: Record<string, string> = {
  address_issue: 'Insufficient Address',
  refused: 'Addressee Refused',
  cod_not_ready: 'Addressee Not Ready With Payment',
  other: 'Not Attempted',
};

function attemptEvent(step: SandboxStep): string {
  if (step.remark) return withDetail('Item Not Delivered', step.remark);
  // The feed has labels of their own for the two commonest reasons.
  if (step.ndr === 'premises_closed') return 'Door Locked';
  if (step.ndr === 'customer_unavailable') return 'Addressee Absent';
  return withDetail('Item Not Delivered', step.ndr ? ATTEMPT_DETAIL[step.ndr] ?? null : null);
}

/**
 * One step in the postal vocabulary (texts config/mappings/indiapost.yaml maps). A hold is written as
 * the office receiving the article with the reason attached (mapped as an exception, NDR other); a
 * return-leg movement is a plain "Item Dispatched" (the return status comes from the "Item Returned"
 * before it).
 */
function eventText(step: SandboxStep, style: PostalStyle, office: string, bag: string): string {
  // Real feeds end some texts with the bag or office id ("…, PO24504112000").
  const withBag = (label: string) => (step.remark ? withDetail(label, step.remark) : `${label}, ${bag}`);
  switch (step.kind) {
    case 'booked':
    case 'picked_up': // the counter (or pickup) booking is the postal acceptance scan
      return withDetail(style.bookingEvent(office), step.remark);
    case 'hub_in': return withDetail('Item Received', step.remark);
    case 'hub_out': return withBag('Item Dispatched');
    case 'bagged': return withBag('Item Bagged ');
    case 'out_for_delivery': return withDetail('Out for Delivery', step.remark);
    case 'attempt_failed': return attemptEvent(step);
    case 'delivered': return withDetail('Item Delivered', step.remark);
    case 'hold': return withDetail('Item Received', step.remark ?? 'Held at office due to operational reasons');
    case 'rto_initiated': return withDetail('Item Returned', step.remark);
    case 'rto_in_transit': return withDetail('Item Dispatched', step.remark);
    case 'rto_delivered': return withDetail('Item Delivered to Sender', step.remark);
    case 'cancelled': return withDetail('Item Cancel', step.remark);
    case 'lost': return withDetail('Item Lost', step.remark);
    case 'unmapped': return withDetail('Item Sent for Sanitisation', step.remark);
  }
}

const HUB_KINDS = new Set(['hub_in', 'hub_out', 'bagged', 'hold', 'rto_in_transit']);

/** Post office names: sorting hubs for movements between offices, head offices otherwise. */
function officeName(step: SandboxStep): string {
  return `${step.location} ${HUB_KINDS.has(step.kind) ? 'NSH' : 'H.O'}`;
}

function postalDate(ms: number): { date: string; time: string } {
  const p = istParts(ms);
  return { date: `${p.year}-${p.month}-${p.day}T00:00:00Z`, time: `${p.hour}:${p.minute}:${p.second}` };
}

/** The full postal answer for a shipment. */
export function postalBody(shipment: SandboxShipment, style: PostalStyle): string {
  const booked = postalDate(shipment.bookedAt);
  const edd = shipment.edd === null ? null : postalDate(shipment.edd);
  // The feed lists the newest scan first.
  const trackingDetails = lastToFirst(shipment).map((step) => {
    const office = officeName(step);
    const { date, time } = postalDate(step.at);
    const bag = `PO${shipment.awb.replace(/\D/g, '').slice(-8).padStart(8, '0')}${String(Math.floor(step.at / 60_000) % 10_000).padStart(4, '0')}`;
    return { date, time, office, event: eventText(step, style, office, bag) };
  });
  return JSON.stringify({
    status_code: 200,
    success: true,
    message: 'Success',
    data: [{
      booking_details: {
        article_number: shipment.awb,
        article_type: style.articleType(shipment),
        booked_at: `${shipment.origin.city} H.O`,
        booked_on: booked.date,
        booking_time: booked.time,
        origin_pincode: shipment.origin.pincode,
        destination_pincode: shipment.destination.pincode,
        delivery_location: `${shipment.destination.city} H.O`,
        weight: String(shipment.weightGrams),
        edd: edd?.date ?? null,
        edd_time: edd?.time ?? null,
      },
      tracking_details: trackingDetails,
    }],
  });
}

function trackingReply(article: string, answer: ScenarioAnswer, style: PostalStyle): SandboxReply {
  switch (answer.kind) {
    case 'shipment':
    case 'slow':
      return json(200, postalBody(answer.shipment, style));
    case 'not_found':
      return json(404, { status_code: 404, success: false, message: 'No record found for the given article number' });
    case 'down':
      return unavailableReply('503 Service Unavailable');
    case 'malformed':
      // Cut off mid-record, as a dropped connection behind a proxy leaves it.
      return json(200, `{"status_code":200,"success":true,"message":"Success",` +
        `"data":[{"booking_details":{"article_number":${JSON.stringify(article)},"article_type":"Speed Po`);
  }
}

export function postalRenderer(style: PostalStyle): SandboxRenderer {
  const login: SandboxRoute = {
    method: 'POST',
    path: '/v1/access/login',
    handle(req) {
      let credentials: unknown;
      try {
        credentials = JSON.parse(req.body);
      } catch {
        return json(400, { status_code: 400, success: false, message: 'Invalid request body' });
      }
      const record = typeof credentials === 'object' && credentials !== null ? credentials as Record<string, unknown> : {};
      if (record.username !== SANDBOX_CREDENTIAL || record.password !== SANDBOX_CREDENTIAL) {
        return json(401, { status_code: 401, success: false, message: 'Invalid username or password' });
      }
      return json(200, {
        status_code: 200,
        success: true,
        message: 'Login successful',
        data: { access_token: SANDBOX_POSTAL_TOKEN, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_S },
      });
    },
  };
  const tracking: SandboxRoute = {
    method: 'GET',
    path: '/v1/tracking/:article',
    handle(req, params, lookup) {
      if (!hasBearer(req, SANDBOX_POSTAL_TOKEN)) {
        return json(401, { status_code: 401, success: false, message: 'Unauthorized: invalid or expired token' });
      }
      const article = params.article ?? '';
      return trackingReply(article, lookup(article), style);
    },
  };
  return { slug: style.slug, routes: [login, tracking] };
}
