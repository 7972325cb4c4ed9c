/**
 * Sandbox Shiprocket: `POST /v1/external/auth/login` hands out a token; `GET /v1/external/courier/track/awb/:awb`
 * behind `Authorization: Bearer <token>` (the issued token, or `sandbox` itself) answers `tracking_data` with
 * activities newest first. `sr-status` goes out as a string, a number or "NA" by turns, as Shiprocket's own
 * answers mix them; codes and texts are the ones config/mappings/shiprocket.yaml maps.
 */
import { LOGIN_PATH, PINCODE_KEYS, TRACK_PATH } from '../../carriers/shiprocket/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import { istParts } from '../ist.ts';
import type { SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer, StepKind } from '../types.ts';
import { jsonReply as json, latestStep, newestFirst, requestHeader, unavailableReply } from './shared.ts';

const SANDBOX_CREDENTIAL = 'sandbox';
/** What the login call hands out for the sandbox user (Shiprocket tokens are JWTs; this one is opaque). */
const ISSUED_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.c2FuZGJveA.c2hpcHJvY2tldA';
const ACCEPTED_TOKENS: ReadonlySet<string> = new Set([ISSUED_TOKEN, SANDBOX_CREDENTIAL]);

interface ActivityWords {
  srStatus: string;
  label: string;
  activity: string;
  /**
   * True when the activity text alone maps the same way as the code, so the activity may go out with
   * `sr-status` "NA" (Shiprocket sends NA whenever the courier's event has no code of its own).
   */
  textMapsAlike: boolean;
}

const words = (srStatus: string, label: string, activity: string, textMapsAlike: boolean): ActivityWords =>
  ({ srStatus, label, activity, textMapsAlike });

const STEP_WORDS: Record<StepKind, ActivityWords> = {
  booked: words('52', 'SHIPMENT BOOKED', 'Shipment Booked', true),
  picked_up: words('42', 'PICKED UP', 'Picked Up', true),
  hub_in: words('38', 'REACHED AT DESTINATION HUB', 'Received at Facility', true),
  // Shiprocket has no bagging status: a bag shows up as the move it is part of.
  bagged: words('18', 'IN TRANSIT', 'Bagged at Facility', false),
  hub_out: words('18', 'IN TRANSIT', 'In Transit', true),
  out_for_delivery: words('17', 'OUT FOR DELIVERY', 'Out For Delivery', true),
  attempt_failed: words('21', 'UNDELIVERED', 'Undelivered', true),
  delivered: words('7', 'DELIVERED', 'Delivered', true),
  hold: words('22', 'DELAYED', 'Delayed', false),
  rto_initiated: words('9', 'RTO INITIATED', 'RTO Initiated', true),
  rto_in_transit: words('46', 'RTO IN TRANSIT', 'RTO In Transit', false),
  rto_delivered: words('10', 'RTO DELIVERED', 'RTO Delivered', true),
  cancelled: words('45', 'CANCELLED BEFORE DISPATCHED', 'Cancelled Before Dispatched', true),
  lost: words('12', 'LOST', 'Lost', true),
  unmapped: words('NA', 'NA', 'Shipment sent for sanitisation', true),
};

/** Failed-attempt remarks (the courier's words, carried in the activity's `status`). */
const ATTEMPT_REMARKS: Record<NdrReason, string> = {
  customer_unavailable: 'Consignee Unavailable',
  address_issue: 'Bad/Incomplete Address',
  refused: 'Customer Refused to accept/Order Cancelled',
  premises_closed: 'Office/Institute closed',
  cod_not_ready: 'Payment not ready with customer',
  other: 'Not attempted',
};

const HOLD_REMARK = 'Delay due to weather';

/** "2022-07-19 11:37:00" in IST. */
function shiprocketTime(ms: number): string {
  const p = istParts(ms);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

function remarkOf(step: SandboxStep, w: ActivityWords): string {
  if (step.remark !== null) return step.remark;
  if (step.kind === 'attempt_failed') return ATTEMPT_REMARKS[step.ndr ?? 'other'];
  if (step.kind === 'hold') return HOLD_REMARK;
  return w.label;
}

/** Every third activity as a number, every third "NA" where the text maps alike, the rest as strings. */
function srStatusOf(w: ActivityWords, index: number): string | number {
  if (w.srStatus === 'NA') return 'NA';
  if (index % 3 === 1) return Number(w.srStatus);
  if (index % 3 === 2 && w.textMapsAlike) return 'NA';
  return w.srStatus;
}

function firstAt(shipment: SandboxShipment, kind: StepKind): string {
  const times = shipment.steps.filter((s) => s.kind === kind).map((s) => s.at);
  return times.length === 0 ? '' : shiprocketTime(Math.min(...times));
}

function trackBody(shipment: SandboxShipment): string {
  const steps = newestFirst(shipment);
  const latest = latestStep(shipment.steps);
  const latestWords = latest ? STEP_WORDS[latest.kind] : STEP_WORDS.booked;
  const edd = shipment.edd === null ? null : shiprocketTime(shipment.edd);
  const courier = shipment.serviceType === 'surface' ? 'Delhivery Surface' : 'Bluedart Air';
  return JSON.stringify({
    tracking_data: {
      track_status: 1,
      shipment_status: Number(latestWords.srStatus) || 0,
      shipment_track: [{
        id: 0,
        awb_code: shipment.awb,
        courier_company_id: shipment.serviceType === 'surface' ? 44 : 14,
        shipment_id: 0,
        order_id: 0,
        pickup_date: firstAt(shipment, 'picked_up') || null,
        delivered_date: firstAt(shipment, 'delivered') || null,
        weight: (shipment.weightGrams / 1000).toFixed(3),
        packages: 1,
        current_status: latestWords.label,
        delivered_to: shipment.destination.city,
        destination: shipment.destination.city,
        [PINCODE_KEYS.destination]: shipment.destination.pincode,
        consignee_name: 'Sandbox Consignee',
        origin: shipment.origin.city,
        [PINCODE_KEYS.origin]: shipment.origin.pincode,
        courier_agent_details: null,
        courier_name: courier,
        edd,
        pod: 'Not Available',
        pod_status: '',
        rto_delivered_date: firstAt(shipment, 'rto_delivered') || null,
      }],
      shipment_track_activities: steps.map((step, i) => {
        const w = STEP_WORDS[step.kind];
        return {
          date: shiprocketTime(step.at),
          status: remarkOf(step, w),
          activity: w.activity,
          location: step.location,
          'sr-status': srStatusOf(w, i),
          'sr-status-label': w.label,
        };
      }),
      track_url: `https://shiprocket.co/tracking/${shipment.awb}`,
      etd: edd,
    },
  });
}

function loginOf(body: string): { email: unknown; password: unknown } | null {
  try {
    const login = JSON.parse(body) as { email?: unknown; password?: unknown } | null;
    return login && typeof login === 'object' ? { email: login.email, password: login.password } : null;
  } catch {
    return null;
  }
}

const loginRoute: SandboxRoute = {
  method: 'POST',
  path: LOGIN_PATH,
  handle(req) {
    const login = loginOf(req.body);
    if (login === null) return json(422, { message: 'The given data was invalid.', status_code: 422 });
    if (login.email !== SANDBOX_CREDENTIAL || login.password !== SANDBOX_CREDENTIAL) {
      return json(403, { message: 'Invalid email and password combination', status_code: 403 });
    }
    return json(200, { id: 1, first_name: 'Sandbox', last_name: 'API', email: SANDBOX_CREDENTIAL, company_id: 1, token: ISSUED_TOKEN });
  },
};

const trackRoute: SandboxRoute = {
  method: 'GET',
  path: `${TRACK_PATH}/:awb`,
  handle(req, params, lookup) {
    const authorization = requestHeader(req, 'authorization');
    if (!authorization) return json(401, { message: 'Token not provided', status_code: 401 });
    const [scheme, token] = authorization.trim().split(/\s+/, 2);
    if (scheme !== 'Bearer' || !token || !ACCEPTED_TOKENS.has(token)) return json(401, { message: 'Unauthenticated.', status_code: 401 });

    const awb = params.awb?.trim() ?? '';
    const answer = lookup(awb);
    switch (answer.kind) {
      case 'not_found':
        return json(200, {
          tracking_data: {
            track_status: 0,
            shipment_status: 0,
            shipment_track: [{
              id: 0, awb_code: '', courier_company_id: 0, shipment_id: 0, order_id: 0, pickup_date: null, delivered_date: null, weight: '', packages: 0,
              current_status: '', origin: '', destination: '', edd: null,
            }],
            shipment_track_activities: null,
            error: 'Aahh! There is no activities found in our DB. Please have some patience it will be updated soon.',
          },
        });
      case 'down':
        return unavailableReply();
      case 'malformed':
        return json(200, `{"tracking_data":{"track_status":1,"shipment_status":18,"shipment_track_activities":[{"date":"2026-11-20 09:15:00","status":"IN TRANSIT","activity":"In Tra`);
      case 'shipment':
      case 'slow':
        return json(200, trackBody(answer.shipment));
    }
  },
};

export const renderer: SandboxRenderer = { slug: 'shiprocket', routes: [loginRoute, trackRoute] };
