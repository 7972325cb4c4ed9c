/**
 * Sandbox Blue Dart: `GET /RoutingServlet?handler=tnt&action=custawbquery&…` with `loginid` and
 * `lickey` in the query, answering XML `<ShipmentData>` newest first. A return gets a second
 * `<Shipment>` under a new waybill number; scan texts are the ones config/mappings/bluedart.yaml maps.
 */
import { ORIGIN_PINCODE_ELEMENT } from '../../carriers/bluedart/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import { istParts } from '../ist.ts';
import type { SandboxReply, SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer, StepKind } from '../types.ts';
import { latestStep, newestFirst, unavailableReply } from './shared.ts';

const SANDBOX_CREDENTIAL = 'sandbox';
/** Blue Dart cuts remarks at 40 characters. */
const REMARK_LIMIT = 40;

interface ScanWords {
  scan: string;
  code: string;
  type: string;
}

const STEP_WORDS: Record<Exclude<StepKind, 'attempt_failed' | 'hold'>, ScanWords> = {
  booked: { scan: 'Manifested', code: '015', type: 'PU' },
  picked_up: { scan: 'SHIPMENT INSCAN', code: '001', type: 'PU' },
  hub_in: { scan: 'SHIPMENT ARRIVED AT HUB', code: '002', type: 'UD' },
  bagged: { scan: 'SHIPMENT CONNECTED TO DESTINATION', code: '003', type: 'UD' },
  hub_out: { scan: 'SHIPMENT OUTSCANNED TO NETWORK', code: '004', type: 'UD' },
  out_for_delivery: { scan: 'Shipment Outscan', code: '005', type: 'UD' },
  delivered: { scan: 'Shipment delivered', code: '000', type: 'DL' },
  rto_initiated: { scan: 'RETURN TO SHIPPER', code: '074', type: 'RT' },
  rto_in_transit: { scan: 'SHIPMENT OUTSCANNED TO NETWORK', code: '004', type: 'RT' },
  rto_delivered: { scan: 'DELIVERED BACK TO SHIPPER', code: '188', type: 'RT' },
  cancelled: { scan: 'SHIPMENT CANCELLED BY SHIPPER', code: '135', type: 'UD' },
  lost: { scan: 'SHIPMENT LOST', code: '099', type: 'UD' },
  unmapped: { scan: 'SHIPMENT SENT FOR SANITISATION', code: '141', type: 'UD' },
};

/** Blue Dart writes the failure reason as the scan text itself. */
const ATTEMPT_TEXTS: Record<NdrReason, string> = {
  customer_unavailable: 'CONSIGNEE NOT AVAILABLE;CANT DELIVER',
  address_issue: 'ADDRESS INCOMPLETE, CANNOT DELIVER',
  refused: 'CONSIGNEE REFUSED TO ACCEPT',
  premises_closed: 'RESIDENCE/OFFICE CLOSED;CANT DELIVER',
  cod_not_ready: 'PAYMENT NOT READY WITH CONSIGNEE',
  other: 'NOT ATTEMPTED',
};
const SAYS_UNDELIVERED = /can'?t deliver|cannot deliver|not deliver|undeliver/i;

const RETURN_KINDS: ReadonlySet<StepKind> = new Set(['rto_in_transit', 'rto_delivered']);

const cut = (remark: string) => remark.slice(0, REMARK_LIMIT).trimEnd();

function wordsFor(step: SandboxStep): ScanWords {
  if (step.kind === 'attempt_failed') {
    const reason = cut(step.remark ?? ATTEMPT_TEXTS[step.ndr ?? 'other']);
    return { scan: SAYS_UNDELIVERED.test(reason) ? reason : `${reason};CANT DELIVER`, code: '025', type: 'UD' };
  }
  if (step.kind === 'hold') return { scan: `SHIPMENT ON HOLD - ${cut(step.remark ?? 'NETWORK DELAY DUE TO WEATHER')}`, code: '031', type: 'UD' };
  return STEP_WORDS[step.kind];
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const element = (name: string, value: string | number | null) =>
  value === null || value === '' ? `<${name}/>` : `<${name}>${escapeXml(String(value))}</${name}>`;

/** "07 June 2012" */
function longDate(ms: number): string {
  const p = istParts(ms);
  return `${p.day} ${p.monthName} ${p.year}`;
}

/** "07-Jun-2012" */
function shortDate(ms: number): string {
  const p = istParts(ms);
  return `${p.day}-${p.monthShort}-${p.year}`;
}

/** "13:05" */
function clock(ms: number): string {
  const p = istParts(ms);
  return `${p.hour}:${p.minute}`;
}

/** The return's own waybill number: same length, different leading digit. */
function returnWaybill(awb: string): string {
  return `${awb.startsWith('9') ? '8' : '9'}${awb.slice(1)}`;
}

interface Leg {
  waybill: string;
  refNo: string;
  from: SandboxShipment['origin'];
  to: SandboxShipment['destination'];
  pickUpAt: number;
  steps: SandboxStep[];
}

function shipmentXml(shipment: SandboxShipment, leg: Leg): string {
  const latest = latestStep(leg.steps);
  const latestWords = latest ? wordsFor(latest) : null;
  const scans = newestFirst(shipment, leg.steps).map((step) => {
    const w = wordsFor(step);
    return `<ScanDetail>${element('Scan', w.scan)}${element('ScanCode', w.code)}${element('ScanType', w.type)}`
      + `${element('ScanDate', shortDate(step.at))}${element('ScanTime', clock(step.at))}`
      + `${element('ScannedLocation', step.location.toUpperCase())}</ScanDetail>`;
  }).join('');
  return `<Shipment WaybillNo="${escapeXml(leg.waybill)}" RefNo="${escapeXml(leg.refNo)}">`
    + element('Service', shipment.serviceType === 'surface' ? 'DART SURFACELINE' : 'DOMESTIC PRIORITY')
    + element('PickUpDate', longDate(leg.pickUpAt))
    + element('PickUpTime', clock(leg.pickUpAt))
    + element('Origin', leg.from.city.toUpperCase())
    + element(ORIGIN_PINCODE_ELEMENT, leg.from.pincode)
    + element('Destination', leg.to.city.toUpperCase())
    + element('ConsigneePincode', leg.to.pincode)
    + element('ConsigneeTelNo', 'XXXXXX3210')
    + element('ExpectedDeliveryDate', shipment.edd === null ? null : longDate(shipment.edd))
    + element('Weight', (shipment.weightGrams / 1000).toFixed(3))
    + element('Status', latestWords?.scan ?? null)
    + element('StatusType', latestWords?.type ?? null)
    + element('StatusDate', latest ? longDate(latest.at) : null)
    + element('StatusTime', latest ? clock(latest.at) : null)
    + element('ReceivedBy', null)
    + element('Instructions', latest?.remark ? cut(latest.remark) : null)
    + `<Scans>${scans}</Scans></Shipment>`;
}

function trackXml(shipment: SandboxShipment): string {
  const forward = shipment.steps.filter((s) => !RETURN_KINDS.has(s.kind));
  const back = shipment.steps.filter((s) => RETURN_KINDS.has(s.kind));
  const legs: Leg[] = [{ waybill: shipment.awb, refNo: `SBX${shipment.awb.slice(-6)}`, from: shipment.origin, to: shipment.destination, pickUpAt: shipment.bookedAt, steps: forward }];
  if (back.length > 0) {
    const started = shipment.steps.find((s) => s.kind === 'rto_initiated')?.at ?? Math.min(...back.map((s) => s.at));
    legs.push({ waybill: returnWaybill(shipment.awb), refNo: shipment.awb, from: shipment.destination, to: shipment.origin, pickUpAt: started, steps: back });
  }
  return `<?xml version="1.0" encoding="UTF-8"?><ShipmentData>${legs.map((leg) => shipmentXml(shipment, leg)).join('')}</ShipmentData>`;
}

const xmlReply = (status: number, body: string): SandboxReply => ({ status, contentType: 'text/xml; charset=utf-8', body });

const trackRoute: SandboxRoute = {
  method: 'GET',
  path: '/RoutingServlet',
  handle(req, _params, lookup) {
    const q = req.query;
    if (q.loginid !== SANDBOX_CREDENTIAL || q.lickey !== SANDBOX_CREDENTIAL) {
      return xmlReply(403, '<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Error>Invalid LoginID or License Key</Error></ShipmentData>');
    }
    const waybill = q.numbers?.trim();
    if (q.handler !== 'tnt' || q.action !== 'custawbquery' || !waybill) {
      return xmlReply(400, '<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Error>Invalid request</Error></ShipmentData>');
    }

    const answer = lookup(waybill);
    switch (answer.kind) {
      case 'not_found':
        return xmlReply(200, `<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Shipment WaybillNo="${escapeXml(waybill)}">`
          + '<StatusType>NF</StatusType><Status>Incorrect Waybill number or No Information</Status></Shipment></ShipmentData>');
      case 'down':
        return unavailableReply('503 Service Unavailable');
      case 'malformed':
        return xmlReply(200, `<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Shipment WaybillNo="${escapeXml(waybill)}" RefNo="">`
          + '<Service>DOMESTIC PRIORITY</Service><Scans><ScanDetail><Scan>SHIPMENT INSC');
      case 'shipment':
      case 'slow':
        return xmlReply(200, trackXml(answer.shipment));
    }
  },
};

export const renderer: SandboxRenderer = { slug: 'bluedart', routes: [trackRoute] };
