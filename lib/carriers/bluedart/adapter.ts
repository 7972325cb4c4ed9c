/**
 * Blue Dart, two ways in (carrier-formats.md and its "Corrections from real bodies"):
 * - the API gateway, which current integrations use: `GET <base>/in/transportation/token/v1/login`
 *   with headers `ClientID` and `clientSecret` → `{"JWTToken": "…"}`, then `GET
 *   <base>/in/transportation/tracking/v1?handler=tnt&action=custawbquery&loginid=…&awb=awb&numbers=…
 *   &format=json&lickey=…&verno=1&scan=1` with header `JWTToken`. Used when the `clientid` and
 *   `clientsecret` credentials are configured. The tracking licence key differs from the shipping one.
 * - the legacy servlet: `GET <base>/servlet/RoutingServlet?…&format=xml&verno=1.3&scan=1`, with
 *   `loginid` and `lickey` only.
 * Both answer `ShipmentData` → `Shipment[]` (attributes `WaybillNo`, `RefNo`) → `Scans` →
 * `ScanDetail[]` newest first; the servlet in XML (real 2012 body), the gateway in the same names as
 * JSON (*unconfirmed* beyond its error object: `WaybillNo`/`RefNo` as plain keys, `Scans` either
 * `{ScanDetail: […]}` or `[{ScanDetail: {…}}]`, both read). A gateway error is HTTP 200
 * `{"ShipmentData":{"Error":"License Mismatch"}}` (real body).
 *
 * Quirks handled: dates as "01 June 2012" (header) and "07-Jun-2012" (scans) with "13:05" times, all
 * IST; texts often upper case; `ScanCode` may be absent and later data adds `ScanGroupType` and
 * `ScannedLocationCode` (ignored); a return ("RETURNED TO ORIGIN AT SHIPPER'S REQUEST", type RT)
 * names its `NewWaybillNo`, and that waybill's own scans end in an ordinary "SHIPMENT DELIVERED" —
 * when the answer lacks the new waybill, both numbers are asked again in one call, and the return
 * waybill's scans are kept after the forward ones (normalization reads a delivery after the return
 * started as the return delivered); scans carry no remarks of their own — the shipment's
 * `Instructions` (and `ReceivedBy`) belong to its latest scan; "no information" answers per waybill.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';
import { isEchoOf, type Awb, type PollShipment, type RawScan } from '../../schemas/index.ts';
import { requireCredential } from '../shared/credentials.ts';
import { credentialsRejected, parseJsonOrUndefined } from '../shared/json-body.ts';
import { cityPlace, pincodeOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { looseText as text, unexpectedShape } from '../shared/schema-fields.ts';
import { endOfDay, wallTime } from '../shared/wall-time.ts';
import { kilogramsToGrams } from '../shared/weights.ts';
import { TokenCache, type LoginResult } from '../shared/token-cache.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'bluedart';
export const SERVLET_PATH = '/servlet/RoutingServlet';
export const GATEWAY_LOGIN_PATH = '/in/transportation/token/v1/login';
export const GATEWAY_TRACK_PATH = '/in/transportation/tracking/v1';

/**
 * Origin pincode: Blue Dart's documented answer names only `ConsigneePincode`, so this element is
 * *unconfirmed* (the sandbox writes it so lanes work). Real answers without it give no origin pincode.
 */
export const ORIGIN_PINCODE_ELEMENT = 'OriginPincode';

const ScanDetailSchema = z.object({
  Scan: z.string(),
  ScanCode: text,
  ScanType: text,
  ScanDate: text,
  ScanTime: text,
  ScannedLocation: text,
});

const ShipmentSchema = z.object({
  '@_WaybillNo': text,
  Service: text,
  PickUpDate: text,
  PickUpTime: text,
  Origin: text,
  [ORIGIN_PINCODE_ELEMENT]: text,
  Destination: text,
  ConsigneePincode: text,
  ExpectedDeliveryDate: text,
  Weight: text,
  Status: text,
  StatusType: text,
  ReceivedBy: text,
  Instructions: text,
  // `<Scans/>` parses to an empty string.
  Scans: z.preprocess((v) => (v === '' ? {} : v), z.object({ ScanDetail: z.array(ScanDetailSchema).optional() }).nullish()),
});

const ShipmentDataSchema = z.object({ Shipment: z.array(ShipmentSchema).optional(), Error: text });

const BodySchema = z.object({ ShipmentData: z.union([ShipmentDataSchema, z.literal('')]) });

/** Where an answer whose `ShipmentData` is an object breaks (a union alone names only `ShipmentData`). */
function shapeError(format: 'JSON' | 'XML', value: unknown, unionError: z.ZodError): ParsedPoll {
  const detailed = z.object({ ShipmentData: ShipmentDataSchema }).safeParse(value);
  return unexpectedShape(format, detailed.success ? unionError : detailed.error);
}

type BluedartShipment = z.infer<typeof ShipmentSchema>;

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  isArray: (name) => name === 'Shipment' || name === 'ScanDetail',
});

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DATE = /^(\d{1,2})[\s-]+([A-Za-z]{3,9})[\s-]+(\d{4})$/;
const CLOCK = /^(\d{1,2}):?(\d{2})(?::(\d{2}))?$/;

/** "01 June 2012" / "07-Jun-2012" plus "13:05" / "1305" (IST) → offset-less ISO; null when not a real time. */
function bluedartTime(date: string | null, clock: string | null): string | null {
  const d = date === null ? null : DATE.exec(date);
  if (!d) return null;
  const monthName = d[2]!.toLowerCase();
  const month = MONTHS.indexOf(monthName.slice(0, 3)) + 1;
  const day = Number(d[1]);
  const year = Number(d[3]);
  const c = clock === null ? ['', '0', '00', '00'] : CLOCK.exec(clock);
  if (month === 0 || !c) return null;
  return wallTime(year, month, day, Number(c[1]), Number(c[2]), Number(c[3] ?? 0));
}

function headerOf(s: BluedartShipment): PollShipment {
  const eddDay = bluedartTime(s.ExpectedDeliveryDate, null);
  return {
    origin: cityPlace(s.Origin, pincodeOf(s[ORIGIN_PINCODE_ELEMENT])),
    destination: cityPlace(s.Destination, pincodeOf(s.ConsigneePincode)),
    service_type: s.Service === null ? null : /surface/i.test(s.Service) ? 'surface' : 'express',
    weight_grams: kilogramsToGrams(s.Weight),
    booked_at: bluedartTime(s.PickUpDate, s.PickUpTime),
    estimated_delivery_at: eddDay === null ? null : endOfDay(eddDay),
  };
}

function scanDetails(s: BluedartShipment) {
  return typeof s.Scans === 'object' && s.Scans !== null ? s.Scans.ScanDetail ?? [] : [];
}

/** A waybill Blue Dart has no data for ("Incorrect Waybill number or No Information"). */
function isUnknown(s: BluedartShipment): boolean {
  return s.StatusType?.toUpperCase() === 'NF' || (scanDetails(s).length === 0 && /no information|incorrect waybill/i.test(s.Status ?? ''));
}

/** The shipment-level remark Blue Dart attaches to the latest scan. */
function latestRemark(s: BluedartShipment): string | null {
  const parts = [s.Instructions, s.ReceivedBy === null ? null : `Received by: ${s.ReceivedBy}`].filter((p): p is string => p !== null);
  return parts.length === 0 ? null : parts.join('; ');
}

function scansOf(s: BluedartShipment, offset: number): RawScan[] | string {
  const scans: RawScan[] = [];
  for (const [i, d] of scanDetails(s).entries()) {
    const occurredAt = bluedartTime(d.ScanDate, d.ScanTime);
    if (occurredAt === null) return `scan ${offset + i + 1} has no readable ScanDate/ScanTime`;
    if (d.Scan.trim() === '') return `scan ${offset + i + 1} has no Scan text`;
    scans.push({ occurred_at: occurredAt, raw_status: d.Scan, raw_code: d.ScanType, remarks: null, location: d.ScannedLocation });
  }
  const remark = latestRemark(s);
  if (remark !== null && scans.length > 0) {
    // Equal times keep the first listed: Blue Dart lists newest first.
    let latest = 0;
    for (let i = 1; i < scans.length; i++) if (Date.parse(scans[i]!.occurred_at) > Date.parse(scans[latest]!.occurred_at)) latest = i;
    scans[latest] = { ...scans[latest]!, remarks: remark };
  }
  return scans;
}

/**
 * Blue Dart's API gateway answers errors as HTTP 200 JSON `{"ShipmentData":{"Error":"License
 * Mismatch"}}` (real body: fixtures/SOURCES.md). A licence or login complaint is a credentials error.
 */
function errorOutcome(error: string): ParsedPoll {
  const words = error.trim().slice(0, 100);
  if (/licen[cs]e|login|unauthori[sz]ed|token|credential/i.test(words)) {
    return { outcome: 'error', error: `credentials rejected (ShipmentData.Error: ${words})` };
  }
  if (/no information|incorrect waybill/i.test(words)) return { outcome: 'not_found' };
  return { outcome: 'error', error: `carrier error: ${words}` };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A gateway JSON shipment in the names the XML reader produces (attributes as `@_…`, one `Scans.ScanDetail` array). */
function asXmlShaped(shipment: unknown): unknown {
  if (!isObject(shipment)) return shipment;
  const { WaybillNo, RefNo, Scans, ...rest } = shipment;
  let details: unknown = [];
  if (Array.isArray(Scans)) details = Scans.map((s) => (isObject(s) && 'ScanDetail' in s ? s.ScanDetail : s)).flat();
  else if (isObject(Scans)) details = Scans.ScanDetail === undefined ? [] : [Scans.ScanDetail].flat();
  else if (Scans !== undefined && Scans !== null && Scans !== '') details = Scans;
  return { ...rest, '@_WaybillNo': WaybillNo, '@_RefNo': RefNo, Scans: { ScanDetail: details } };
}

/** A gateway JSON answer: the error object, or `ShipmentData.Shipment` read like the XML. */
function jsonAnswer(awb: Awb, body: string): ParsedPoll {
  const json = parseJsonOrUndefined(body) as { ShipmentData?: unknown } | undefined;
  if (json === undefined) return { outcome: 'error', error: 'invalid JSON' };
  const data = json.ShipmentData;
  if (!isObject(data)) return { outcome: 'error', error: 'unexpected JSON: no ShipmentData' };
  if (typeof data.Error === 'string' && data.Error.trim() !== '') return errorOutcome(data.Error);
  if (data.Shipment === undefined) return { outcome: 'error', error: 'unexpected JSON: no ShipmentData.Shipment or ShipmentData.Error' };
  const shipments = [data.Shipment].flat().map(asXmlShaped);
  const value = { ShipmentData: { Shipment: shipments, Error: null } };
  const parsed = BodySchema.safeParse(value);
  if (!parsed.success) return shapeError('JSON', value, parsed.error);
  return shipmentsAnswer(awb, parsed.data.ShipmentData === '' ? [] : parsed.data.ShipmentData.Shipment ?? []);
}

/** The poll of the answer's shipments: the asked waybill's header, every known waybill's scans. */
function shipmentsAnswer(awb: Awb, shipments: BluedartShipment[]): ParsedPoll {
  const known = shipments.filter((s) => !isUnknown(s));
  if (known.length === 0) return shipments.length ? { outcome: 'not_found' } : { outcome: 'error', error: 'no Shipment' };

  const main = known.find((s) => isEchoOf(s['@_WaybillNo'], awb)) ?? known[0]!;
  // The forward waybill first, then its return waybill, then anything else the carrier listed.
  const ordered = [main, ...known.filter((s) => s !== main)];
  const scans: RawScan[] = [];
  for (const shipment of ordered) {
    const own = scansOf(shipment, scans.length);
    if (typeof own === 'string') return { outcome: 'error', error: own };
    scans.push(...own);
  }
  return { outcome: 'ok', shipment: headerOf(main), scans };
}

function readBody(awb: Awb, response: NativeResponse): ParsedPoll {
  const body = response.body.trim();
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  if (body.startsWith('{') && response.status >= 200 && response.status <= 299) return jsonAnswer(awb, body);
  if (response.status === 404 && !/<html/i.test(body)) return { outcome: 'not_found' };
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  if (body === '') return { outcome: 'error', error: 'empty body' };
  if (XMLValidator.validate(body) !== true) return { outcome: 'error', error: 'broken XML' };
  const value: unknown = xml.parse(body);
  const parsed = BodySchema.safeParse(value);
  if (!parsed.success) return shapeError('XML', value, parsed.error);
  const data = parsed.data.ShipmentData;
  if (data === '') return { outcome: 'error', error: 'empty ShipmentData' };
  if (data.Error !== null) return errorOutcome(data.Error);
  return shipmentsAnswer(awb, data.Shipment ?? []);
}

const credential = (endpoint: CarrierEndpoint, name: string) => requireCredential(SLUG, endpoint, name);

/** The gateway when its client credentials are configured, else the legacy servlet. */
const usesGateway = (endpoint: CarrierEndpoint) => Boolean(endpoint.credentials.clientid && endpoint.credentials.clientsecret);

/** The tracking query both ways share; `numbers` may list the forward and the return waybill. */
function trackQuery(endpoint: CarrierEndpoint, numbers: string, gateway: boolean): URLSearchParams {
  return new URLSearchParams({
    handler: 'tnt',
    action: 'custawbquery',
    loginid: credential(endpoint, 'loginid'),
    awb: 'awb',
    numbers,
    format: gateway ? 'json' : 'xml',
    lickey: credential(endpoint, 'lickey'),
    verno: gateway ? '1' : '1.3',
    scan: '1',
  });
}

/** JWTs by base URL and client id: one login serves lookups until the token's `exp` or a 401. */
const jwts = new TokenCache();

/** Epoch ms of a JWT's `exp` less a minute, or undefined when the token says none. */
function jwtExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 - 60_000 : undefined;
  } catch {
    return undefined;
  }
}

async function gatewayLogin(endpoint: CarrierEndpoint, send: HttpSend): Promise<LoginResult> {
  const response = await send({
    method: 'GET',
    url: `${endpoint.baseUrl}${GATEWAY_LOGIN_PATH}`,
    headers: { ClientID: credential(endpoint, 'clientid'), clientSecret: credential(endpoint, 'clientsecret'), Accept: 'application/json' },
  });
  if (response.status < 200 || response.status > 299) return { failed: response };
  const token = (parseJsonOrUndefined(response.body.trim()) as { JWTToken?: unknown } | undefined)?.JWTToken;
  if (typeof token !== 'string' || token.trim() === '') {
    return { failed: { status: 502, headers: response.headers, body: 'Blue Dart login returned no JWTToken' } };
  }
  const expiresAtMs = jwtExpiry(token.trim());
  return expiresAtMs === undefined ? { token: token.trim() } : { token: token.trim(), expiresAtMs };
}

/**
 * The new waybill a return names (`newWaybillNo`, element or key, any case) when the answer does not
 * carry that waybill's own shipment (a `WaybillNo` attribute or key of that number); else null.
 */
function missingReturnWaybill(response: NativeResponse): string | null {
  if (response.status !== 200) return null;
  const named = /newWaybillNo"?\s*[:>]\s*"?(\d{8,14})/i.exec(response.body);
  if (!named) return null;
  const listed = new RegExp(`(?<!new)WaybillNo"?\\s*[:=]\\s*"?${named[1]}\\b`, 'i').test(response.body);
  return listed ? null : named[1]!;
}

export const adapter: CarrierAdapter = {
  slug: SLUG,

  async fetch(awb, endpoint, send) {
    const gateway = usesGateway(endpoint);
    const ask = (numbers: string): Promise<NativeResponse> => {
      if (!gateway) {
        return send({
          method: 'GET', url: `${endpoint.baseUrl}${SERVLET_PATH}?${trackQuery(endpoint, numbers, false)}`, headers: { Accept: 'application/xml' },
        });
      }
      const track = (token: string) => send({
        method: 'GET',
        url: `${endpoint.baseUrl}${GATEWAY_TRACK_PATH}?${trackQuery(endpoint, numbers, true)}`,
        headers: { JWTToken: token, Accept: 'application/json' },
      });
      return jwts.send(`${endpoint.baseUrl}|${credential(endpoint, 'clientid')}`, () => gatewayLogin(endpoint, send), track);
    };
    const first = await ask(awb);
    // A return under a new waybill: ask for both, so the return's own scans come in the same answer.
    const returnWaybill = missingReturnWaybill(first);
    return returnWaybill === null ? first : ask(`${awb},${returnWaybill}`);
  },

  parse: neverThrows(readBody),
};
