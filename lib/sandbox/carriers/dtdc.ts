/**
 * Sandbox DTDC: `GET /api/dtdc/authenticate?username=…&password=…` hands out a token;
 * `POST /rest/JSONCnTrk/getTrackDetails` with `X-Access-Token` answers JSON `trackHeader` +
 * `trackDetails[]` oldest first, in the strCode / strAction vocabulary config/mappings/dtdc.yaml maps.
 */
import { AUTH_PATH, PINCODE_KEYS, TRACK_PATH } from '../../carriers/dtdc/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import { istParts } from '../ist.ts';
import type { SandboxRequest, SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer, StepKind } from '../types.ts';
import { jsonReply as json, latestStep, oldestFirst, requestHeader, unavailableReply } from './shared.ts';

const SANDBOX_CREDENTIAL = 'sandbox';
/** What the authenticate call hands out for the sandbox credentials (DTDC tokens are opaque strings). */
const ISSUED_TOKEN = 'c2FuZGJveC1kdGRjLXRva2Vu';

interface ActionWords {
  code: string;
  action: string;
  /** Written when the step has no remark of its own ('' is how DTDC writes "none"). */
  remark: string;
}

// Title-case actions with DTDC's scan codes, as real answers carry them (carrier-formats.md,
// "Corrections from real bodies").
const STEP_WORDS: Record<Exclude<StepKind, 'attempt_failed'>, ActionWords> = {
  booked: { code: 'BKD', action: 'Booked', remark: '' },
  picked_up: { code: 'PCUP', action: 'Pickup Completed', remark: '' },
  // DTDC writes "In Transit" for every manifest move: only strCode tells them apart.
  hub_in: { code: 'CDIN', action: 'In Transit', remark: '' },
  bagged: { code: 'OBMN', action: 'In Transit', remark: '' },
  hub_out: { code: 'CDOUT', action: 'In Transit', remark: '' },
  out_for_delivery: { code: 'OUTDLV', action: 'Out For Delivery', remark: '' },
  delivered: { code: 'DLV', action: 'Delivered', remark: 'SIGN' },
  hold: { code: 'HLDUP', action: 'Held Up', remark: 'HEAVY RAIN IN THE AREA' },
  rto_initiated: { code: 'SETRTO', action: 'Set RTO', remark: 'RETURN TO ORIGIN' },
  rto_in_transit: { code: 'RTOCDOUT', action: 'In Transit', remark: '' },
  rto_delivered: { code: 'RTODLV', action: 'RTO Delivered', remark: '' },
  cancelled: { code: 'CNCL', action: 'Cancelled', remark: 'CANCELLED BY SHIPPER' },
  lost: { code: 'NONDLV', action: 'Not Delivered', remark: 'LST|SHIPMENT LOST' },
  unmapped: { code: 'SNT', action: 'Sent For Sanitisation', remark: '' },
};

/** Non-delivery reasons in DTDC's `CODE|DESCRIPTION` remark form. */
const ATTEMPT_REMARKS: Record<NdrReason, [code: string, description: string]> = {
  customer_unavailable: ['PNA', 'RECEIVER NOT AVAILABLE'],
  address_issue: ['ADR', 'ADDRESS INCOMPLETE/WRONG'],
  refused: ['PRF', 'REFUSED TO ACCEPT'],
  premises_closed: ['DLK', 'OFFICE CLOSED/DOOR LOCKED'],
  cod_not_ready: ['CAN', 'AMOUNT NOT READY'],
  other: ['UAT', 'COULD NOT ATTEMPT'],
};

function wordsFor(step: SandboxStep): ActionWords {
  if (step.kind === 'attempt_failed') {
    const [code, description] = ATTEMPT_REMARKS[step.ndr ?? 'other'];
    return { code: 'NONDLV', action: 'Not Delivered', remark: `${code}|${step.remark ?? description}` };
  }
  if (step.kind === 'lost' && step.remark) return { ...STEP_WORDS.lost, remark: `LST|${step.remark}` };
  return STEP_WORDS[step.kind];
}

/** A coded remark (attempts, lost) is always written in DTDC's form; others are the step's own words. */
const remarkOf = (step: SandboxStep) =>
  (step.kind === 'attempt_failed' || step.kind === 'lost' ? wordsFor(step).remark : step.remark ?? wordsFor(step).remark);

/** "21062017" */
function ddmmyyyy(ms: number): string {
  const p = istParts(ms);
  return `${p.day}${p.month}${p.year}`;
}

/** "1614" */
function hhmm(ms: number): string {
  const p = istParts(ms);
  return `${p.hour}${p.minute}`;
}

/** The shipment's header status, from its latest step. */
function headerStatus(kind: StepKind | undefined): string {
  switch (kind) {
    case 'delivered': return 'Delivered';
    case 'attempt_failed': return 'Not Delivered';
    case 'hold': return 'Held Up';
    case 'rto_initiated': case 'rto_in_transit': return 'RTO In Transit';
    case 'rto_delivered': return 'RTO Delivered';
    case 'cancelled': return 'Cancelled';
    case 'booked': return 'Booked';
    case 'out_for_delivery': return 'Out For Delivery';
    default: return 'In Transit';
  }
}

function trackBody(shipment: SandboxShipment): string {
  // DTDC lists oldest first.
  const steps = oldestFirst(shipment);
  const latest = latestStep(shipment.steps);
  const booked = istParts(shipment.bookedAt);
  const returning = shipment.steps.some((s) => s.kind === 'rto_initiated');
  const express = shipment.serviceType !== 'surface';
  return JSON.stringify({
    statusCode: 200,
    statusFlag: true,
    status: 'SUCCESS',
    errorDetails: null,
    trackHeader: {
      strShipmentNo: shipment.awb,
      strRefNo: '',
      strCNType: 'CP',
      strCNTypeCode: 'SBX01',
      strCNTypeName: 'SANDBOX',
      strCNProduct: express ? 'PRIORITY' : 'GROUND EXPRESS',
      strModeCode: express ? 'AR1' : 'SF1',
      strMode: express ? 'AIR' : 'SURFACE',
      strCNProdCODFOD: '',
      strOrigin: shipment.origin.city.toUpperCase(),
      strOriginRemarks: 'Booked By',
      [PINCODE_KEYS.origin]: shipment.origin.pincode,
      strBookedDate: ddmmyyyy(shipment.bookedAt),
      strBookedTime: `${booked.hour}:${booked.minute}:${booked.second}`,
      strPieces: '1',
      strWeightUnit: 'KG',
      strWeight: (shipment.weightGrams / 1000).toFixed(4),
      strDestination: shipment.destination.city.toUpperCase(),
      [PINCODE_KEYS.destination]: shipment.destination.pincode,
      strExpectedDeliveryDate: shipment.edd === null ? '' : ddmmyyyy(shipment.edd),
      strStatus: headerStatus(latest?.kind),
      strStatusTransOn: latest ? ddmmyyyy(latest.at) : '',
      strStatusTransTime: latest ? hhmm(latest.at) : '',
      strStatusRelCode: '',
      strStatusRelName: '',
      strRemarks: latest ? remarkOf(latest) : '',
      strNoOfAttempts: String(shipment.steps.filter((s) => s.kind === 'attempt_failed' || s.kind === 'delivered').length),
      strRtoNumber: returning ? `0000${shipment.awb.replace(/\D/g, '').slice(-8)}` : '',
    },
    trackDetails: steps.map((step) => {
      const w = wordsFor(step);
      return {
        strCode: w.code,
        strAction: w.action,
        strManifestNo: '',
        strOrigin: step.location.toUpperCase(),
        strDestination: '',
        strActionDate: ddmmyyyy(step.at),
        strActionTime: hhmm(step.at),
        sTrRemarks: remarkOf(step),
      };
    }),
  });
}

const failure = (statusCode: number, name: string, value: string) =>
  ({ statusCode, statusFlag: false, status: 'FAILED', errorDetails: [{ name, value }], trackHeader: null, trackDetails: null });

function consignmentOf(body: string): string | null {
  try {
    const request = JSON.parse(body) as { trkType?: unknown; strcnno?: unknown };
    return request.trkType === 'cnno' && typeof request.strcnno === 'string' && request.strcnno.trim() !== '' ? request.strcnno.trim() : null;
  } catch {
    return null;
  }
}

/** DTDC's gateway refuses a missing or stale token the Spring way (real body: fixtures of the dtdc adapter). */
function springUnauthorized(req: SandboxRequest) {
  return {
    timestamp: new Date().toISOString().replace('Z', '+00:00'),
    status: 401,
    error: 'Unauthorized',
    message: 'Unauthorized: Authentication token was either missing or invalid.',
    path: `/dtdc-tracking-api/dtdc-api${req.path}`,
  };
}

const authenticateRoute: SandboxRoute = {
  method: 'GET',
  path: AUTH_PATH,
  handle(req) {
    if (req.query.username !== SANDBOX_CREDENTIAL || req.query.password !== SANDBOX_CREDENTIAL) {
      return json(401, failure(401, 'authentication', 'Unauthorized'));
    }
    return { status: 200, contentType: 'text/plain', body: ISSUED_TOKEN };
  },
};

const trackRoute: SandboxRoute = {
  method: 'POST',
  path: TRACK_PATH,
  handle(req, _params, lookup) {
    if (requestHeader(req, 'x-access-token') !== ISSUED_TOKEN) return json(401, springUnauthorized(req));
    const cn = consignmentOf(req.body);
    if (cn === null) return json(400, failure(400, 'strcnno', 'Bad Request'));

    const answer = lookup(cn);
    switch (answer.kind) {
      case 'not_found':
        return json(200, {
          ...failure(200, 'strShipmentNo', cn),
          errorDetails: [{ name: 'strShipmentNo', value: cn }, { name: 'strError', value: 'NO DATA FOUND FOR THIS CNNO NUMBER' }],
        });
      case 'down':
        return unavailableReply('503 Service Unavailable');
      case 'malformed':
        return json(200, `{"statusCode":200,"statusFlag":true,"status":"SUCCESS","errorDetails":null,"trackHeader":{"strShipmentNo":"${cn.replace(/\W/g, '')}","strOrigin":"BANGAL`);
      case 'shipment':
      case 'slow':
        return json(200, trackBody(answer.shipment));
    }
  },
};

export const renderer: SandboxRenderer = { slug: 'dtdc', routes: [authenticateRoute, trackRoute] };
