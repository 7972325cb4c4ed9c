/**
 * Shree Maruti (regional surface; carrier code "SMILE" on its Delcaper platform): a JSON REST API
 * (carrier-formats.md, "Corrections from real bodies"; the earlier HTML form belonged to Gati).
 * - `POST <base>/auth/login` `{"email","password","vendorType":"SELLER"}` → a bearer `accessToken`
 *   (with a `refreshToken`); `GET <base>/auth/refresh-token` renews it.
 * - `GET <base>/tracking/v2/{awb}` with `Authorization: Bearer <accessToken>` → an answer carrying
 *   `status: 200`, `orderStatus` and `statuses[]`.
 * - Documented statuses: NEW, READY_FOR_DISPATCH, IN_TRANSIT, OUT_FOR_DELIVERY, UNDELIVERED (attempts
 *   1–3), RTO, RTO_IN_TRANSIT, RTO_OUT_FOR_DELIVERY, RTO_DELIVERED, DELIVERED
 *   (config/mappings/shreemaruti.yaml).
 *
 * No full real body has been found, so everything below marked SHAPE is *unconfirmed* and decided
 * here, in one place, to be corrected when a body is seen:
 * - SHAPE: the tokens sit at the top level or under `data` of the login answer; the refresh call
 *   sends the refresh token as its bearer.
 * - SHAPE: the tracking fields sit under `data` (or at the top level): `awbNumber`, `orderStatus`,
 *   `pickupDetails` / `deliveryDetails` `{city, state, pincode}`, `bookingDate`,
 *   `expectedDeliveryDate`, `weight` (kg), and `statuses[]{status, remark, location, timestamp}`
 *   oldest first. Times are ISO 8601; without an offset they are IST. An unknown number is HTTP 404
 *   or `status: 404`; a refused token HTTP 401 or `status: 401`.
 * Credentials: `email` and `password`. Unknown fields are ignored everywhere.
 */
import { z } from 'zod';
import { isEchoOf, type Awb, type PollShipment, type RawScan } from '../../schemas/index.ts';
import { requireCredential } from '../shared/credentials.ts';
import { credentialsRejected, readJsonBody } from '../shared/json-body.ts';
import { isRecord, nonEmpty } from '../shared/json-fields.ts';
import { PlaceSchema, locationOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { optionalText } from '../shared/schema-fields.ts';
import { isPlausibleYear, isRealDateTime } from '../shared/wall-time.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'shreemaruti';
export const LOGIN_PATH = '/auth/login';
export const REFRESH_PATH = '/auth/refresh-token';
export const TRACK_PATH = '/tracking/v2';

/** ISO 8601 with an optional fraction and offset; a bare date is allowed for promised days. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** The carrier's time as ISO 8601 (offset kept when given, else IST wall time); a bare date → `dayTime` that day. */
function isoTime(text: string | null | undefined, dayTime = '00:00:00'): string | null {
  const m = text === null || text === undefined ? null : ISO_TIME.exec(text.trim());
  if (!m) return null;
  const [, year, month, day, hour, minute, second = '00', fraction, zone] = m;
  if (hour === undefined) return isoTime(`${year}-${month}-${day}T${dayTime}`);
  if (!isPlausibleYear(Number(year))) return null;
  if (!isRealDateTime(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second))) return null;
  const offset = zone === undefined || zone === 'Z' ? (zone ?? '') : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${offset}`;
}

const StatusEntrySchema = z.object({
  status: z.string().trim().min(1),
  remark: optionalText,
  remarks: optionalText,
  location: optionalText,
  timestamp: optionalText,
  createdAt: optionalText,
});

const TrackingSchema = z.object({
  awbNumber: z.union([z.string(), z.number()]).nullish().catch(null),
  orderStatus: optionalText,
  pickupDetails: PlaceSchema,
  deliveryDetails: PlaceSchema,
  bookingDate: optionalText,
  expectedDeliveryDate: optionalText,
  weight: z.number().nonnegative().finite().nullish().catch(null),
  serviceType: optionalText,
  statuses: z.array(StatusEntrySchema),
});

type Tracking = z.infer<typeof TrackingSchema>;

function shipmentOf(t: Tracking): PollShipment {
  return {
    origin: locationOf(t.pickupDetails),
    destination: locationOf(t.deliveryDetails),
    service_type: t.serviceType ? (/surface|ground/i.test(t.serviceType) ? 'surface' : 'express') : null,
    weight_grams: t.weight === null || t.weight === undefined ? null : Math.round(t.weight * 1000),
    booked_at: isoTime(t.bookingDate),
    // A promised day alone means by the end of that day.
    estimated_delivery_at: isoTime(t.expectedDeliveryDate, '23:59:59'),
  };
}

function scansOf(t: Tracking): RawScan[] | ParsedPoll {
  const scans: RawScan[] = [];
  for (const [i, entry] of t.statuses.entries()) {
    const given = entry.timestamp ?? entry.createdAt;
    const occurredAt = isoTime(given);
    if (occurredAt === null || !/T/.test(given ?? '')) return { outcome: 'error', error: `unreadable statuses.${i}.timestamp` };
    scans.push({
      occurred_at: occurredAt,
      raw_status: entry.status,
      raw_code: null,
      remarks: nonEmpty(entry.remark ?? entry.remarks),
      location: nonEmpty(entry.location),
    });
  }
  return scans;
}

/** The answer's own `status` number (the API repeats the HTTP status in the body), or null. */
function bodyStatus(json: unknown): number | null {
  if (!isRecord(json)) return null;
  const status = json.status ?? json.statusCode;
  return typeof status === 'number' ? status : typeof status === 'string' && /^\d{3}$/.test(status) ? Number(status) : null;
}

function bodyMessage(json: unknown): string {
  return isRecord(json) && typeof json.message === 'string' ? json.message.trim().slice(0, 100) : '';
}

function readBody(awb: Awb, response: NativeResponse): ParsedPoll {
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  const read = readJsonBody(response.body);
  if (response.status === 404) return 'json' in read ? { outcome: 'not_found' } : { outcome: 'error', error: 'HTTP 404' };
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  if (!('json' in read)) return read;

  const status = bodyStatus(read.json);
  const message = bodyMessage(read.json);
  if (status === 401 || status === 403) return { outcome: 'error', error: `credentials rejected (status ${status}${message ? `: ${message}` : ''})` };
  if (status === 404) return { outcome: 'not_found' };
  if (status !== null && (status < 200 || status > 299)) return { outcome: 'error', error: `carrier error: status ${status}${message ? `: ${message}` : ''}` };

  const root = isRecord(read.json) && isRecord(read.json.data) ? read.json.data : read.json;
  const parsed = TrackingSchema.safeParse(root);
  if (!parsed.success) {
    const where = parsed.error.issues[0]?.path.join('.') ?? '?';
    return { outcome: 'error', error: `unexpected JSON at ${root === read.json ? '' : 'data.'}${where}` };
  }
  const number = parsed.data.awbNumber === null || parsed.data.awbNumber === undefined ? null : String(parsed.data.awbNumber).trim();
  if (number !== null && number !== '' && !isEchoOf(number, awb)) {
    return { outcome: 'error', error: `answer is for another awbNumber (${number.slice(0, 20)})` };
  }
  const scans = scansOf(parsed.data);
  if (!Array.isArray(scans)) return scans;
  if (scans.length === 0 && parsed.data.orderStatus === null) return { outcome: 'not_found' };
  return { outcome: 'ok', shipment: shipmentOf(parsed.data), scans };
}

// ---------------------------------------------------------------- login, refresh and the tracking call

interface Tokens { access: string; refresh: string | null }

const TokenAnswerSchema = z.object({ accessToken: z.string().min(1), refreshToken: z.string().min(1).nullish().catch(null) });

/** The tokens in a login or refresh answer (top level or under `data`), or null. */
function tokensOf(response: NativeResponse): Tokens | null {
  if (response.status < 200 || response.status > 299) return null;
  const read = readJsonBody(response.body);
  if (!('json' in read)) return null;
  const root = isRecord(read.json) && isRecord(read.json.data) ? read.json.data : read.json;
  const parsed = TokenAnswerSchema.safeParse(root);
  return parsed.success ? { access: parsed.data.accessToken, refresh: parsed.data.refreshToken ?? null } : null;
}

/** Tokens by base URL and user: one login serves many lookups; a refused token is refreshed, then logged in again. */
const sessions = new Map<string, Tokens>();

const credential = (endpoint: CarrierEndpoint, name: string) => requireCredential(SLUG, endpoint, name);

/** The tokens, or the login's failing answer (handed back as the poll's answer so parse reports it). */
async function login(endpoint: CarrierEndpoint, send: HttpSend): Promise<Tokens | NativeResponse> {
  const response = await send({
    method: 'POST',
    url: `${endpoint.baseUrl}${LOGIN_PATH}`,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ email: credential(endpoint, 'email'), password: credential(endpoint, 'password'), vendorType: 'SELLER' }),
  });
  const tokens = tokensOf(response);
  if (tokens !== null) return tokens;
  if (response.status === 401 || response.status === 403 || bodyStatus(readJsonAnswerOrNull(response)) === 401) {
    return { status: 401, headers: response.headers, body: response.body };
  }
  return response.status >= 200 && response.status <= 299
    ? { status: 502, headers: response.headers, body: 'Shree Maruti login returned no accessToken' }
    : response;
}

function readJsonAnswerOrNull(response: NativeResponse): unknown {
  const read = readJsonBody(response.body);
  return 'json' in read ? read.json : null;
}

async function refresh(endpoint: CarrierEndpoint, send: HttpSend, refreshToken: string): Promise<Tokens | null> {
  const response = await send({
    method: 'GET', url: `${endpoint.baseUrl}${REFRESH_PATH}`, headers: { Authorization: `Bearer ${refreshToken}`, Accept: 'application/json' },
  });
  const tokens = tokensOf(response);
  return tokens === null ? null : { access: tokens.access, refresh: tokens.refresh ?? refreshToken };
}

/** A refused token reads as HTTP 401 or as `status: 401` inside a 200. */
function refused(response: NativeResponse): boolean {
  return response.status === 401 || (response.status === 200 && bodyStatus(readJsonAnswerOrNull(response)) === 401);
}

export const adapter: CarrierAdapter = {
  slug: SLUG,

  async fetch(awb, endpoint, send) {
    const key = `${endpoint.baseUrl}|${credential(endpoint, 'email')}`;
    const track = (token: string) => send({
      method: 'GET',
      url: `${endpoint.baseUrl}${TRACK_PATH}/${encodeURIComponent(awb)}`,
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    });
    const held = sessions.get(key);
    if (held !== undefined) {
      const response = await track(held.access);
      if (!refused(response)) return response;
      sessions.delete(key);
      const renewed = held.refresh === null ? null : await refresh(endpoint, send, held.refresh);
      if (renewed !== null) {
        sessions.set(key, renewed);
        return track(renewed.access);
      }
    }
    const fresh = await login(endpoint, send);
    if (!('access' in fresh)) return fresh;
    sessions.set(key, fresh);
    return track(fresh.access);
  },

  parse: neverThrows(readBody),
};
