/**
 * Sandbox DTDC: `GET /api/dtdc/authenticate?username=…&password=…` hands out a token;
 * `POST /rest/JSONCnTrk/getTrackDetails` with `X-Access-Token` answers JSON `trackHeader` +
 * `trackDetails[]` oldest first, in the strCode / strAction vocabulary config/mappings/dtdc.yaml maps.
 */
import { AUTH_PATH, PINCODE_KEYS, TRACK_PATH } from '../../carriers/dtdc/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import { istParts } from '../ist.ts';
import type { SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer, StepKind } from '../types.ts';
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

const STEP_WORDS: Record<Exclude<StepKind, 'attempt_failed'>, ActionWords> = {
  booked: { code: 'BKD', action: 'Booked', remark: '' },
  picked_up: { code: 'PCUP', action: 'Picked Up', remark: '' },
  // DTDC writes "In Transit" for every manifest move: only strCode tells them apart.
  hub_in: { code: 'CDIN', action: 'In Transit', remark: '' },
  bagged: { code: 'OBMD', action: 'In Transit', remark: '' },
  hub_out: { code: 'CDOUT', action: 'In Transit', remark: '' },
  out_for_delivery: { code: 'OUTDLV', action: 'Out For Delivery', remark: '' },
  delivered: { code: 'DLV', action: 'Delivered', remark: 'SIGN' },
  hold: { code: 'HLD', action: 'Heldup', remark: 'HEAVY RAIN IN THE AREA' },
  rto_initiated: { code: 'RTO', action: 'RTO Initiated', remark: 'RETURN TO ORIGIN' },
  rto_in_transit: { code: 'CDOUT', action: 'In Transit', remark: 'RTO' },
  rto_delivered: { code: 'RTD', action: 'Consignment Has Returned', remark: '' },
  cancelled: { code: 'CAN', action: 'Cancelled', remark: 'CANCELLED BY SHIPPER' },
  lost: { code: 'LST', action: 'Shipment Lost', remark: '' },
  unmapped: { code: 'SNT', action: 'Sent For Sanitisation', remark: '' },
};

/** Non-delivery reasons as DTDC writes them in the remarks. */
const ATTEMPT_REMARKS: Record<NdrReason, string> = {
  customer_unavailable: 'PARTY NOT AVAILABLE',
  address_issue: 'ADDRESS NOT FOUND',
  refused: 'CONSIGNEE REFUSED TO ACCEPT',
  premises_closed: 'RESIDENCE/OFFICE CLOSED',
  cod_not_ready: 'COD AMOUNT NOT READY',
  other: 'NOT ATTEMPTED',
};

function wordsFor(step: SandboxStep): ActionWords {
  if (step.kind === 'attempt_failed') return { code: 'NONDLV', action: 'Not Delivered', remark: ATTEMPT_REMARKS[step.ndr ?? 'other'] };
  return STEP_WORDS[step.kind];
}

const remarkOf = (step: SandboxStep) => step.remark ?? wordsFor(step).remark;

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
    case 'delivered': return 'DELIVERED';
    case 'attempt_failed': return 'ATTEMPTED';
    case 'hold': return 'HELDUP';
    case 'rto_initiated': case 'rto_in_transit': case 'rto_delivered': return 'RTO';
    case 'cancelled': return 'CANCELLED';
    case 'booked': return 'BOOKED';
    default: return 'DELIVERY PROCESS IN PROGRESS';
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
    if (requestHeader(req, 'x-access-token') !== ISSUED_TOKEN) return json(401, failure(401, 'X-Access-Token', 'Unauthorized'));
    const cn = consignmentOf(req.body);
    if (cn === null) return json(400, failure(400, 'strcnno', 'Bad Request'));

    const answer = lookup(cn);
    switch (answer.kind) {
      case 'not_found':
        return json(200, { ...failure(200, 'strShipmentNo', cn), errorDetails: [{ name: 'strShipmentNo', value: cn }, { name: 'strError', value: 'NO DATA FOUND FOR THIS CNNO NUMBER' }] });
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
