/**
 * Sandbox Shree Maruti: its JSON API (lib/carriers/shreemaruti/adapter.ts holds the decided details
 * of this partly *unconfirmed* shape). `POST /auth/login` with the sandbox credentials hands out a
 * bearer access token and a refresh token; `GET /auth/refresh-token` renews it; `GET
 * /tracking/v2/:awb` answers `{status: 200, message, data: {…, orderStatus, statuses[]}}` oldest first,
 * in the documented status values config/mappings/shreemaruti.yaml maps.
 */
import { LOGIN_PATH, REFRESH_PATH, TRACK_PATH } from '../../carriers/shreemaruti/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import { istIsoLocal } from '../ist.ts';
import type { SandboxPlace, SandboxRequest, SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer } from '../types.ts';
import { jsonReply as json, latestStep, requestHeader, unavailableReply } from './shared.ts';

const SANDBOX_CREDENTIAL = 'sandbox';
/** What the login hands out for the sandbox credentials (the platform's tokens are JWTs). */
export const SANDBOX_ACCESS_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.c2FuZGJveC1zaHJlZW1hcnV0aQ.c2lnbmF0dXJl';
const SANDBOX_REFRESH_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.c2FuZGJveC1yZWZyZXNo.c2lnbmF0dXJl';

interface StatusWords {
  status: string;
  /** Written when the step has no remark of its own. */
  remark: string | null;
}

/** Failed attempts: UNDELIVERED with the reason as the remark. */
const ATTEMPT_REMARKS: Record<NdrReason, string> = {
  customer_unavailable: 'Consignee not available',
  address_issue: 'Address incomplete / incorrect',
  refused: 'Consignee refused to accept',
  premises_closed: 'Premises closed',
  cod_not_ready: 'COD amount not ready',
  other: 'Not attempted',
};

/**
 * One step in the platform's documented status values. Movements between hubs are all IN_TRANSIT
 * told apart by the remark; CANCELLED and LOST are not in the documented list (*unconfirmed*).
 */
function wordsFor(step: SandboxStep): StatusWords {
  switch (step.kind) {
    case 'booked': return { status: 'NEW', remark: 'Order created' };
    case 'picked_up': return { status: 'IN_TRANSIT', remark: 'Shipment picked up' };
    case 'hub_in': return { status: 'IN_TRANSIT', remark: `Received at ${step.location}` };
    case 'bagged': return { status: 'IN_TRANSIT', remark: `Bagged at ${step.location}` };
    case 'hub_out': return { status: 'IN_TRANSIT', remark: `Dispatched from ${step.location}` };
    case 'hold': return { status: 'IN_TRANSIT', remark: 'Held due to operational delay' };
    case 'out_for_delivery': return { status: 'OUT_FOR_DELIVERY', remark: null };
    case 'attempt_failed': return { status: 'UNDELIVERED', remark: ATTEMPT_REMARKS[step.ndr ?? 'other'] };
    case 'delivered': return { status: 'DELIVERED', remark: null };
    case 'rto_initiated': return { status: 'RTO', remark: 'Return to origin initiated' };
    case 'rto_in_transit': return { status: 'RTO_IN_TRANSIT', remark: null };
    case 'rto_delivered': return { status: 'RTO_DELIVERED', remark: null };
    case 'cancelled': return { status: 'CANCELLED', remark: 'Cancelled by seller' };
    case 'lost': return { status: 'LOST', remark: null };
    case 'unmapped': return { status: 'SENT_FOR_SANITISATION', remark: null };
  }
}

/** Remarks: a hold keeps its own words after the fixed prefix so the rules still see "held". */
function remarkOf(step: SandboxStep): string | null {
  const words = wordsFor(step);
  if (step.kind === 'hold' && step.remark) return /held|hold|delay/i.test(step.remark) ? step.remark : `Held: ${step.remark}`;
  if (step.kind === 'attempt_failed' || step.kind === 'picked_up' || step.kind === 'hub_in' || step.kind === 'bagged' || step.kind === 'hub_out') {
    return step.remark ? `${words.remark} - ${step.remark}` : words.remark;
  }
  return step.remark ?? words.remark;
}

/** The platform writes UTC with milliseconds and a `Z` (a Node service). */
const platformTime = (ms: number) => new Date(ms).toISOString();

const place = (p: SandboxPlace) => ({ city: p.city, state: p.state, pincode: Number(p.pincode), country: 'India' });

function trackBody(shipment: SandboxShipment): unknown {
  const latest = latestStep(shipment.steps);
  return {
    status: 200,
    message: 'Order tracking fetched successfully',
    data: {
      awbNumber: shipment.awb,
      orderId: `SBX-${shipment.awb}`,
      courier: 'SMILE',
      orderStatus: latest ? wordsFor(latest).status : 'NEW',
      paymentMode: 'PREPAID',
      serviceType: shipment.serviceType === 'surface' ? 'SURFACE' : 'EXPRESS',
      weight: shipment.weightGrams / 1000,
      bookingDate: platformTime(shipment.bookedAt),
      expectedDeliveryDate: shipment.edd === null ? null : istIsoLocal(shipment.edd).slice(0, 10),
      pickupDetails: place(shipment.origin),
      deliveryDetails: place(shipment.destination),
      // Oldest first as the story lists it; a shuffled story goes out as given.
      statuses: shipment.steps.map((step) => ({
        status: wordsFor(step).status,
        remark: remarkOf(step),
        location: step.location,
        timestamp: platformTime(step.at),
        ...(step.kind === 'attempt_failed' ? { attempt: shipment.steps.filter((s) => s.kind === 'attempt_failed' && s.at <= step.at).length } : {}),
      })),
    },
  };
}

const bearer = (req: SandboxRequest) => requestHeader(req, 'authorization')?.replace(/^Bearer\s+/i, '').trim();

const unauthorized = () => json(401, { status: 401, message: 'Unauthorized', error: 'Invalid or expired token' });

const loginRoute: SandboxRoute = {
  method: 'POST',
  path: LOGIN_PATH,
  handle(req) {
    let body: { email?: unknown; password?: unknown } = {};
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return json(400, { status: 400, message: 'Invalid request body' });
    }
    if (body.email !== SANDBOX_CREDENTIAL || body.password !== SANDBOX_CREDENTIAL) return json(401, { status: 401, message: 'Invalid email or password' });
    return json(200, { status: 200, message: 'Login successful', data: { accessToken: SANDBOX_ACCESS_TOKEN, refreshToken: SANDBOX_REFRESH_TOKEN } });
  },
};

const refreshRoute: SandboxRoute = {
  method: 'GET',
  path: REFRESH_PATH,
  handle(req) {
    if (bearer(req) !== SANDBOX_REFRESH_TOKEN) return unauthorized();
    return json(200, { status: 200, message: 'Token refreshed', data: { accessToken: SANDBOX_ACCESS_TOKEN, refreshToken: SANDBOX_REFRESH_TOKEN } });
  },
};

const trackRoute: SandboxRoute = {
  method: 'GET',
  path: `${TRACK_PATH}/:awb`,
  handle(req, params, lookup) {
    if (bearer(req) !== SANDBOX_ACCESS_TOKEN) return unauthorized();
    const answer = lookup(params.awb ?? '');
    switch (answer.kind) {
      case 'not_found': return json(404, { status: 404, message: 'Order not found' });
      case 'down': return unavailableReply('503 Service Temporarily Unavailable');
      case 'malformed': return json(200, `{"status":200,"message":"Order tracking fetched ` +
        `successfully","data":{"awbNumber":"${(params.awb ?? '').replace(/\W/g, '')}","orderStatus":"IN_TRANSIT",` +
        `"statuses":[{"status":"NEW","timestamp":"2026-11-18T04:4`);
      case 'shipment':
      case 'slow':
        return json(200, trackBody(answer.shipment));
    }
  },
};

export const renderer: SandboxRenderer = { slug: 'shreemaruti', routes: [loginRoute, refreshRoute, trackRoute] };
