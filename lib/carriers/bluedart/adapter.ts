/**
 * Blue Dart: `GET …/RoutingServlet?handler=tnt&action=custawbquery&loginid=…&awb=awb&numbers=<awb>
 * &format=xml&lickey=…&verno=1.3&scan=1`, answering XML `<ShipmentData><Shipment WaybillNo=…>` with
 * `<Scans><ScanDetail>` newest first (carrier-formats.md).
 *
 * Credentials: `loginid` and `lickey` (licence key), both sent as query parameters. The base URL carries
 * the servlet prefix (`https://api.bluedart.com/servlet`, lib/carriers/endpoints.ts).
 *
 * Quirks handled: dates as "01 June 2012" (header) and "07-Jun-2012" (scans) with "13:05" times, all
 * IST; a return gets a second `<Shipment>` with a new waybill number (its scans are kept, after the
 * forward ones as the carrier lists them); scans carry no remarks of their own — the shipment's
 * `Instructions` (and `ReceivedBy`) belong to its latest scan; "no information" answers per waybill.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';
import type { PollShipment, RawScan } from '../../schemas/index.ts';
import { requireCredential } from '../shared/credentials.ts';
import { credentialsRejected, parseJsonOrUndefined } from '../shared/json-body.ts';
import { cityPlace, pincodeOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { looseText as text, unexpectedShape } from '../shared/schema-fields.ts';
import { endOfDay, wallTime } from '../shared/wall-time.ts';
import { kilogramsToGrams } from '../shared/weights.ts';
import type { CarrierAdapter, CarrierEndpoint, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'bluedart';

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
  Scans: z.union([z.object({ ScanDetail: z.array(ScanDetailSchema).optional() }), z.literal('')]).nullish(),
});

const BodySchema = z.object({
  ShipmentData: z.union([
    z.object({ Shipment: z.array(ShipmentSchema).optional(), Error: text }),
    z.literal(''),
  ]),
});

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
function jsonError(body: string): ParsedPoll {
  const json = parseJsonOrUndefined(body) as { ShipmentData?: { Error?: unknown } } | undefined;
  const error = json?.ShipmentData?.Error;
  if (typeof error !== 'string' || error.trim() === '') return { outcome: 'error', error: 'unexpected JSON: no ShipmentData.Error' };
  const words = error.trim().slice(0, 100);
  if (/licen[cs]e|login|unauthori[sz]ed|token|credential/i.test(words)) return { outcome: 'error', error: `credentials rejected (ShipmentData.Error: ${words})` };
  if (/no information|incorrect waybill/i.test(words)) return { outcome: 'not_found' };
  return { outcome: 'error', error: `carrier error: ${words}` };
}

function readBody(awb: string, response: NativeResponse): ParsedPoll {
  const body = response.body.trim();
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  if (body.startsWith('{') && response.status >= 200 && response.status <= 299) return jsonError(body);
  if (response.status === 404 && !/<html/i.test(body)) return { outcome: 'not_found' };
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  if (body === '') return { outcome: 'error', error: 'empty body' };
  if (XMLValidator.validate(body) !== true) return { outcome: 'error', error: 'broken XML' };
  const parsed = BodySchema.safeParse(xml.parse(body));
  if (!parsed.success) return unexpectedShape('XML', parsed.error);
  const data = parsed.data.ShipmentData;
  if (data === '') return { outcome: 'error', error: 'empty ShipmentData' };
  if (data.Error !== null) return { outcome: 'error', error: `carrier error: ${data.Error.slice(0, 100)}` };
  const known = (data.Shipment ?? []).filter((s) => !isUnknown(s));
  if (known.length === 0) return data.Shipment?.length ? { outcome: 'not_found' } : { outcome: 'error', error: 'no Shipment' };

  const wanted = awb.trim().toUpperCase();
  const main = known.find((s) => s['@_WaybillNo']?.toUpperCase() === wanted) ?? known[0]!;
  const scans: RawScan[] = [];
  for (const shipment of known) {
    const own = scansOf(shipment, scans.length);
    if (typeof own === 'string') return { outcome: 'error', error: own };
    scans.push(...own);
  }
  return { outcome: 'ok', shipment: headerOf(main), scans };
}

const credential = (endpoint: CarrierEndpoint, name: string) => requireCredential(SLUG, endpoint, name);

export const adapter: CarrierAdapter = {
  slug: SLUG,

  async fetch(awb, endpoint, send) {
    const query = new URLSearchParams({
      handler: 'tnt',
      action: 'custawbquery',
      loginid: credential(endpoint, 'loginid'),
      awb: 'awb',
      numbers: awb,
      format: 'xml',
      lickey: credential(endpoint, 'lickey'),
      verno: '1.3',
      scan: '1',
    });
    return send({ method: 'GET', url: `${endpoint.baseUrl}/RoutingServlet?${query}`, headers: { Accept: 'application/xml' } });
  },

  parse: neverThrows(readBody),
};
