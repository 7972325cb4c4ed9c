/**
 * Sandbox Blue Dart, both ways in (lib/carriers/bluedart/adapter.ts):
 * - the API gateway: `GET /in/transportation/token/v1/login` (headers `ClientID`, `clientSecret`) →
 *   `{"JWTToken"}`; `GET /in/transportation/tracking/v1?…&format=json` with header `JWTToken` and
 *   `loginid`/`lickey` → JSON `ShipmentData`, upper-case texts, no `ScanCode`, `ScanGroupType` and
 *   `ScannedLocationCode` added; a wrong licence key → the real `{"ShipmentData":{"Error":"License Mismatch"}}`;
 * - the legacy servlet: `GET /servlet/RoutingServlet?…&format=xml` → XML `<ShipmentData>`.
 * Scans go newest first; places are cut at 20 characters and remarks at 40, as Blue Dart does. A
 * return reads "RETURNED TO ORIGIN AT SHIPPER'S REQUEST" (type RT) on the forward waybill, which names
 * its `NewWaybillNo`; that waybill's own `<Shipment>` (ending in an ordinary "SHIPMENT DELIVERED") is
 * answered when it is asked for too (`numbers=<awb>,<new>`).
 */
import { GATEWAY_LOGIN_PATH, GATEWAY_TRACK_PATH, ORIGIN_PINCODE_ELEMENT, SERVLET_PATH } from '../../carriers/bluedart/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import { istParts } from '../ist.ts';
import type { SandboxReply, SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer, ScenarioAnswer, StepKind } from '../types.ts';
import { jsonReply, latestStep, newestFirst, requestHeader, unavailableReply } from './shared.ts';

const SANDBOX_CREDENTIAL = 'sandbox';
/** What the gateway login hands out for the sandbox client (a JWT without `exp`). */
export const SANDBOX_JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzYW5kYm94In0.c2FuZGJveA';
/** Blue Dart cuts remarks at 40 characters, places and names at 20. */
const REMARK_LIMIT = 40;
const PLACE_LIMIT = 20;

interface ScanWords {
  scan: string;
  code: string;
  type: string;
}

const STEP_WORDS: Record<Exclude<StepKind, 'attempt_failed' | 'hold'>, ScanWords> = {
  booked: { scan: 'Manifested', code: '015', type: 'PU' },
  picked_up: { scan: 'SHIPMENT INSCAN', code: '001', type: 'PU' },
  hub_in: { scan: 'SHIPMENT ARRIVED AT HUB', code: '002', type: 'UD' },
  // The bagging scans real bodies show (2012 servlet body).
  bagged: { scan: 'Canvas Bag Consolidated Scan', code: '003', type: 'UD' },
  hub_out: { scan: 'SHIPMENT OUTSCANNED TO NETWORK', code: '004', type: 'UD' },
  out_for_delivery: { scan: 'Shipment Outscan', code: '005', type: 'UD' },
  delivered: { scan: 'Shipment delivered', code: '000', type: 'DL' },
  rto_initiated: { scan: "RETURNED TO ORIGIN AT SHIPPER'S REQUEST", code: '074', type: 'RT' },
  // The return waybill's own scans read like any shipment's.
  rto_in_transit: { scan: 'SHIPMENT OUTSCANNED TO NETWORK', code: '004', type: 'UD' },
  rto_delivered: { scan: 'SHIPMENT DELIVERED', code: '000', type: 'DL' },
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
const place = (name: string) => name.toUpperCase().slice(0, PLACE_LIMIT).trimEnd();

type Way = 'gateway' | 'servlet';

/** The gateway's words: upper case, and its own out-for-delivery text. */
function gatewayWords(step: SandboxStep): ScanWords {
  const w = wordsFor(step);
  return { ...w, scan: step.kind === 'out_for_delivery' ? 'SHIPMENT OUT FOR DELIVERY' : w.scan.toUpperCase() };
}

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
  /** The return's waybill, named on the forward waybill once the return started. */
  newWaybill: string | null;
}

/** One waybill as Blue Dart writes it, in element order; `scans` newest first. */
function shipmentFields(shipment: SandboxShipment, leg: Leg, way: Way) {
  const words = way === 'gateway' ? gatewayWords : wordsFor;
  const latest = latestStep(leg.steps);
  const latestWords = latest ? words(latest) : null;
  const scans = newestFirst(shipment, leg.steps).map((step) => {
    const w = words(step);
    return {
      Scan: w.scan,
      // The gateway leaves ScanCode out and adds its group and the location's code.
      ...(way === 'servlet' ? { ScanCode: w.code } : { ScanGroupType: w.type === 'DL' ? 'T' : 'S' }),
      ScanType: w.type,
      ScanDate: shortDate(step.at),
      ScanTime: clock(step.at),
      ScannedLocation: place(step.location),
      ...(way === 'gateway' ? { ScannedLocationCode: step.location.replace(/[^A-Za-z]/g, '').slice(0, 3).toUpperCase() } : {}),
    };
  });
  return {
    header: {
      Service: shipment.serviceType === 'surface' ? 'DART SURFACELINE' : 'DOMESTIC PRIORITY',
      PickUpDate: longDate(leg.pickUpAt),
      PickUpTime: clock(leg.pickUpAt),
      Origin: place(leg.from.city),
      [ORIGIN_PINCODE_ELEMENT]: leg.from.pincode,
      Destination: place(leg.to.city),
      ConsigneePincode: leg.to.pincode,
      ConsigneeTelNo: 'XXXXXX3210',
      ExpectedDeliveryDate: shipment.edd === null ? null : longDate(shipment.edd),
      Weight: (shipment.weightGrams / 1000).toFixed(3),
      Status: latestWords?.scan ?? null,
      StatusType: latestWords?.type ?? null,
      StatusDate: latest ? longDate(latest.at) : null,
      StatusTime: latest ? clock(latest.at) : null,
      ReceivedBy: null,
      Instructions: latest?.remark ? cut(latest.remark) : null,
      ...(leg.newWaybill ? { NewWaybillNo: leg.newWaybill } : {}),
    } as Record<string, string | null>,
    scans,
  };
}

function shipmentXml(shipment: SandboxShipment, leg: Leg): string {
  const { header, scans } = shipmentFields(shipment, leg, 'servlet');
  const scanXml = scans.map((scan) => `<ScanDetail>${Object.entries(scan).map(([k, v]) => element(k, v)).join('')}</ScanDetail>`).join('');
  return `<Shipment WaybillNo="${escapeXml(leg.waybill)}" RefNo="${escapeXml(leg.refNo)}">`
    + Object.entries(header).map(([k, v]) => element(k, v)).join('')
    + `<Scans>${scanXml}</Scans></Shipment>`;
}

function shipmentJson(shipment: SandboxShipment, leg: Leg) {
  const { header, scans } = shipmentFields(shipment, leg, 'gateway');
  return { WaybillNo: leg.waybill, RefNo: leg.refNo, ...header, Scans: { ScanDetail: scans } };
}

/** The forward waybill, and the return waybill when `withReturn` asks for it. */
function legsOf(shipment: SandboxShipment, withReturn: boolean): Leg[] {
  const forward = shipment.steps.filter((s) => !RETURN_KINDS.has(s.kind));
  const back = shipment.steps.filter((s) => RETURN_KINDS.has(s.kind));
  const returned = back.length > 0 || forward.some((s) => s.kind === 'rto_initiated');
  const newWaybill = returned ? returnWaybill(shipment.awb) : null;
  const legs: Leg[] = [{
    waybill: shipment.awb, refNo: `SBX${shipment.awb.slice(-6)}`, from: shipment.origin, to: shipment.destination, pickUpAt: shipment.bookedAt,
    steps: forward, newWaybill,
  }];
  if (withReturn && newWaybill !== null && back.length > 0) {
    const started = shipment.steps.find((s) => s.kind === 'rto_initiated')?.at ?? Math.min(...back.map((s) => s.at));
    legs.push({ waybill: newWaybill, refNo: shipment.awb, from: shipment.destination, to: shipment.origin, pickUpAt: started, steps: back, newWaybill: null });
  }
  return legs;
}

function trackXml(shipment: SandboxShipment, withReturn: boolean): string {
  return `<?xml version="1.0" encoding="UTF-8"?><ShipmentData>${legsOf(shipment, withReturn).map((leg) => shipmentXml(shipment, leg)).join('')}</ShipmentData>`;
}

function trackJson(shipment: SandboxShipment, withReturn: boolean): unknown {
  return { ShipmentData: { Shipment: legsOf(shipment, withReturn).map((leg) => shipmentJson(shipment, leg)) } };
}

const xmlReply = (status: number, body: string): SandboxReply => ({ status, contentType: 'text/xml; charset=utf-8', body });

/** The numbers asked: the first is the shipment, a second equal to its return waybill adds the return. */
function askedNumbers(numbers: string | undefined): { waybill: string; withReturn: boolean } | null {
  const [waybill = '', second] = (numbers ?? '').split(',').map((n) => n.trim());
  if (waybill === '') return null;
  return { waybill, withReturn: second !== undefined && second === returnWaybill(waybill) };
}

type Answer = (body: string | unknown, status?: number) => SandboxReply;

/** One tracking answer in either way's format. */
function track(way: Way, waybill: string, withReturn: boolean, lookup: (awb: string) => ScenarioAnswer): SandboxReply {
  const reply: Answer = way === 'servlet' ? (body, status = 200) => xmlReply(status, String(body)) : (body, status = 200) => jsonReply(status, body);
  const answer = lookup(waybill);
  switch (answer.kind) {
    case 'not_found':
      return way === 'servlet'
        ? reply(`<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Shipment WaybillNo="${escapeXml(waybill)}">`
          + '<StatusType>NF</StatusType><Status>Incorrect Waybill number or No Information</Status></Shipment></ShipmentData>')
        : reply({ ShipmentData: { Shipment: [{ WaybillNo: waybill, StatusType: 'NF', Status: 'Incorrect Waybill number or No Information' }] } });
    case 'down':
      return unavailableReply('503 Service Unavailable');
    case 'malformed':
      return way === 'servlet'
        ? reply(`<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Shipment WaybillNo="${escapeXml(waybill)}" RefNo="">`
          + '<Service>DOMESTIC PRIORITY</Service><Scans><ScanDetail><Scan>SHIPMENT INSC')
        : reply(`{"ShipmentData":{"Shipment":[{"WaybillNo":"${waybill.replace(/\W/g, '')}","Service":"DOMESTIC PRIORITY","Scans":{"ScanDetail":[{"Scan":"SHIPMENT INSC`);
    case 'shipment':
    case 'slow':
      return way === 'servlet' ? reply(trackXml(answer.shipment, withReturn)) : reply(trackJson(answer.shipment, withReturn));
  }
}

const servletRoute: SandboxRoute = {
  method: 'GET',
  path: SERVLET_PATH,
  handle(req, _params, lookup) {
    const q = req.query;
    if (q.loginid !== SANDBOX_CREDENTIAL || q.lickey !== SANDBOX_CREDENTIAL) {
      return xmlReply(403, '<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Error>Invalid LoginID or License Key</Error></ShipmentData>');
    }
    const asked = askedNumbers(q.numbers);
    if (q.handler !== 'tnt' || q.action !== 'custawbquery' || !asked) {
      return xmlReply(400, '<?xml version="1.0" encoding="UTF-8"?><ShipmentData><Error>Invalid request</Error></ShipmentData>');
    }
    return track('servlet', asked.waybill, asked.withReturn, lookup);
  },
};

const gatewayLoginRoute: SandboxRoute = {
  method: 'GET',
  path: GATEWAY_LOGIN_PATH,
  handle(req) {
    if (requestHeader(req, 'clientid') !== SANDBOX_CREDENTIAL || requestHeader(req, 'clientsecret') !== SANDBOX_CREDENTIAL) {
      return jsonReply(401, {
        'error-response': [{ IsError: true, Status: [{ StatusCode: 'Unauthorized', StatusInformation: 'Invalid ClientID or clientSecret' }] }],
        message: 'Unauthorized',
      });
    }
    return jsonReply(200, { JWTToken: SANDBOX_JWT });
  },
};

const gatewayTrackRoute: SandboxRoute = {
  method: 'GET',
  path: GATEWAY_TRACK_PATH,
  handle(req, _params, lookup) {
    if (requestHeader(req, 'jwttoken') !== SANDBOX_JWT) return jsonReply(401, { message: 'Unauthorized: JWTToken missing, invalid or expired' });
    const q = req.query;
    // The gateway says a wrong login or licence key with HTTP 200 (real body).
    if (q.loginid !== SANDBOX_CREDENTIAL || q.lickey !== SANDBOX_CREDENTIAL) return jsonReply(200, { ShipmentData: { Error: 'License Mismatch' } });
    const asked = askedNumbers(q.numbers);
    if (q.handler !== 'tnt' || q.action !== 'custawbquery' || !asked) return jsonReply(200, { ShipmentData: { Error: 'Invalid request' } });
    return track('gateway', asked.waybill, asked.withReturn, lookup);
  },
};

export const renderer: SandboxRenderer = { slug: 'bluedart', routes: [servletRoute, gatewayLoginRoute, gatewayTrackRoute] };
