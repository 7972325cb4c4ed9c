/**
 * DTDC: a token from `GET …/api/dtdc/authenticate?username=…&password=…` (plain-text answer), then
 * `POST …/rest/JSONCnTrk/getTrackDetails` with header `X-Access-Token` and body
 * `{"trkType":"cnno","strcnno":"<cn>","addtnlDtl":"Y"}`, answering JSON `trackHeader` + `trackDetails[]`
 * oldest first (carrier-formats.md; DTDC tracking API 2.2).
 *
 * Credentials: `username` and `password` (for the authenticate call). The base URL carries the API
 * prefix (`https://blktracksvc.dtdc.com/dtdc-api`, lib/carriers/endpoints.ts).
 *
 * Quirks handled: dates as DDMMYYYY with HHMM action times and "15:30:25" booking times (IST); the
 * scan remark key spelled `sTrRemarks`; weights as "0.1000" with a separate unit; "no data" as
 * `statusFlag:false` with `strError` "NO DATA FOUND FOR THIS CNNO NUMBER" inside `errorDetails`;
 * title-case actions ("Out For Delivery") with DTDC's scan codes in `strCode` (the mapping reads
 * codes first); non-delivery remarks as `CODE|DESCRIPTION` ("PNA|Receiver not available"), whose
 * code joins the scan code as raw_code "NONDLV|PNA" so config/mappings/dtdc.yaml maps DTDC's own
 * reason codes; a 401 in Spring's `{timestamp,status,error,message,path}` (a credentials error);
 * extra fields (`version`, lat/long, codes) are ignored. Real sample: fixtures/SOURCES.md.
 */
import { z } from 'zod';
import type { PollShipment, RawScan } from '../../schemas/index.ts';
import { requireCredential } from '../shared/credentials.ts';
import { readJsonAnswer } from '../shared/json-body.ts';
import { cityPlace, pincodeOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { looseText as loose, unexpectedShape } from '../shared/schema-fields.ts';
import { TokenCache, type LoginResult } from '../shared/token-cache.ts';
import { endOfDay, wallTime } from '../shared/wall-time.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'dtdc';
export const AUTH_PATH = '/api/dtdc/authenticate';
export const TRACK_PATH = '/rest/JSONCnTrk/getTrackDetails';

/**
 * Pincodes: DTDC's documented header names offices only (`strOrigin`, `strDestination`), so these
 * keys are *unconfirmed* (the sandbox writes them so lanes work); without them pincodes are null.
 */
export const PINCODE_KEYS = { origin: 'strOriginPincode', destination: 'strDestinationPincode' } as const;

const DetailSchema = z.object({
  strCode: loose,
  strAction: z.string(),
  strOrigin: loose,
  strActionDate: loose,
  strActionTime: loose,
  sTrRemarks: z.union([z.string(), z.number()]).nullish(),
  strRemarks: z.union([z.string(), z.number()]).nullish(),
});

const HeaderSchema = z.object({
  strShipmentNo: loose,
  strOrigin: loose,
  strDestination: loose,
  [PINCODE_KEYS.origin]: loose,
  [PINCODE_KEYS.destination]: loose,
  strBookedDate: loose,
  strBookedTime: loose,
  strExpectedDeliveryDate: loose,
  strWeight: loose,
  strWeightUnit: loose,
  strMode: loose,
  strCNProduct: loose,
});

const BodySchema = z.object({
  statusFlag: z.union([z.boolean(), z.string()]).nullish(),
  status: loose,
  errorDetails: z.array(z.object({ name: loose, value: loose })).nullish(),
  trackHeader: HeaderSchema.nullish(),
  trackDetails: z.array(DetailSchema).nullish(),
});

type Header = z.infer<typeof HeaderSchema>;

/** DDMMYYYY (also DD/MM/YYYY) plus HHMM / HH:MM / HH:MM:SS, IST → offset-less ISO; null when not a real time. */
function dtdcTime(date: string | null, clock: string | null): string | null {
  const d = date === null ? null : /^(\d{2})[/-]?(\d{2})[/-]?(\d{4})$/.exec(date);
  const c = clock === null ? ['', '0', '00', '00'] : /^(\d{1,2}):?(\d{2})(?::?(\d{2}))?$/.exec(clock);
  if (!d || !c) return null;
  const [day, month, year] = [Number(d[1]), Number(d[2]), Number(d[3])];
  return wallTime(year, month, day, Number(c[1]), Number(c[2]), Number(c[3] ?? 0));
}

/** "0.1000" with unit KG, or "0.020 Kg", or grams. */
function grams(weight: string | null, unit: string | null): number | null {
  const m = weight === null ? null : /^(\d+(?:\.\d+)?)\s*([A-Za-z]*)$/.exec(weight);
  if (!m) return null;
  const inGrams = /^(g|gm|gms|grams?)$/i.test(m[2] || unit || '');
  const value = Number(m[1]) * (inGrams ? 1 : 1000);
  return Number.isFinite(value) && value > 0 ? Math.round(value) : null;
}

function serviceOf(h: Header): string | null {
  const text = `${h.strMode ?? ''} ${h.strCNProduct ?? ''}`.trim();
  if (text === '') return null;
  return /surface|ground/i.test(text) ? 'surface' : 'express';
}

function headerOf(h: Header): PollShipment {
  const eddDay = dtdcTime(h.strExpectedDeliveryDate, null);
  return {
    origin: cityPlace(h.strOrigin, pincodeOf(h[PINCODE_KEYS.origin])),
    destination: cityPlace(h.strDestination, pincodeOf(h[PINCODE_KEYS.destination])),
    service_type: serviceOf(h),
    weight_grams: grams(h.strWeight, h.strWeightUnit),
    booked_at: dtdcTime(h.strBookedDate, h.strBookedTime),
    estimated_delivery_at: eddDay === null ? null : endOfDay(eddDay),
  };
}

function remarkOf(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return String(value).trim() === '' ? null : String(value);
}

/** DTDC's non-delivery remark `PNA|Receiver not available`: its reason code. */
const NDR_REMARK = /^\s*([A-Za-z]{2,5})\s*\|/;

/** The scan code, joined by the remark's NDR code on a non-delivery scan ("NONDLV|PNA"). */
function rawCodeOf(code: string | null, remarks: string | null): string | null {
  if (code === null || remarks === null || !/NONDLV$/i.test(code)) return code;
  const ndr = NDR_REMARK.exec(remarks);
  return ndr ? `${code}|${ndr[1]!.toUpperCase()}` : code;
}

function readBody(response: NativeResponse): ParsedPoll {
  const read = readJsonAnswer(response);
  if (!('json' in read)) return read;
  const parsed = BodySchema.safeParse(read.json);
  if (!parsed.success) return unexpectedShape('JSON', parsed.error);
  const data = parsed.data;
  const carrierError = data.errorDetails?.find((e) => e.name === 'strError')?.value ?? null;
  if (carrierError !== null && /no data found/i.test(carrierError)) return { outcome: 'not_found' };
  const failed = data.statusFlag === false || String(data.statusFlag).toLowerCase() === 'false' || data.status?.toUpperCase() === 'FAILED';
  if (failed) return { outcome: 'error', error: `carrier error: ${(carrierError ?? data.status ?? 'FAILED').slice(0, 100)}` };
  if (!data.trackHeader) return { outcome: 'error', error: 'no trackHeader' };

  const scans: RawScan[] = [];
  for (const [i, d] of (data.trackDetails ?? []).entries()) {
    const occurredAt = dtdcTime(d.strActionDate, d.strActionTime);
    if (occurredAt === null) return { outcome: 'error', error: `scan ${i + 1} has no readable strActionDate/strActionTime` };
    if (d.strAction.trim() === '') return { outcome: 'error', error: `scan ${i + 1} has no strAction` };
    const remarks = remarkOf(d.sTrRemarks) ?? remarkOf(d.strRemarks);
    scans.push({
      occurred_at: occurredAt,
      raw_status: d.strAction,
      raw_code: rawCodeOf(d.strCode, remarks),
      remarks,
      location: d.strOrigin,
    });
  }
  return { outcome: 'ok', shipment: headerOf(data.trackHeader), scans };
}

const credential = (endpoint: CarrierEndpoint, name: string) => requireCredential(SLUG, endpoint, name);

/** Tokens by base URL and user: one authenticate call serves many lookups until DTDC rejects it. */
const tokens = new TokenCache();

/** The token, or the authenticate call's failing answer (a non-2xx, so parse reports it as an error). */
async function login(endpoint: CarrierEndpoint, send: HttpSend): Promise<LoginResult> {
  const query = new URLSearchParams({ username: credential(endpoint, 'username'), password: credential(endpoint, 'password') });
  const response = await send({ method: 'GET', url: `${endpoint.baseUrl}${AUTH_PATH}?${query}` });
  // The token arrives as plain text; some gateways quote it like a JSON string.
  const token = response.body.trim().replace(/^"(.*)"$/, '$1');
  if (response.status < 200 || response.status > 299) return { failed: response };
  if (token === '' || /\s|[<{]/.test(token)) return { failed: { status: 502, headers: response.headers, body: 'DTDC authenticate returned no token' } };
  return { token };
}

export const adapter: CarrierAdapter = {
  slug: SLUG,

  async fetch(awb, endpoint, send) {
    const cacheKey = `${endpoint.baseUrl}|${credential(endpoint, 'username')}`;
    const track = (token: string) => send({
      method: 'POST',
      url: `${endpoint.baseUrl}${TRACK_PATH}`,
      headers: { 'X-Access-Token': token, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ trkType: 'cnno', strcnno: awb, addtnlDtl: 'Y' }),
      idempotent: true,
    });
    return tokens.send(cacheKey, () => login(endpoint, send), track);
  },

  parse: neverThrows((_awb, response) => readBody(response)),
};
