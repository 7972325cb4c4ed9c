/**
 * India Post's tracking API, shared by India Post and Speed Post (one feed, one vocabulary).
 *
 * Wire protocol (carrier-formats.md "indiapost and speedpost"; details marked *unconfirmed* there are
 * decided here, in one place):
 * - `POST <base>/v1/access/login` with JSON `{"username","password"}` → `data.access_token`
 *   (+ `expires_in` seconds). Credentials used: `username`, `password`.
 * - `GET <base>/v1/tracking/<article>` with `Authorization: Bearer <access_token>`.
 * - Answer: `{ success, message, data: [{ booking_details, tracking_details[] }] }`; an unknown article
 *   is HTTP 404 (or `success: false` with a "not found" message, or an empty `data`).
 * - `tracking_details[]{date "2025-08-13T00:00:00Z", time "15:31:52", office, event}`: the date carries
 *   a "Z" but is a date only, the time is IST, so both combine into an offset-less IST wall time.
 * - Events have trailing spaces ("Item Booked "), may be glued to their detail
 *   ("Item BookItem Book At Dhule Jaihind Colony S.O") or carry one after " - "
 *   ("Item Not Delivered - Addressee Absent"): the label becomes `raw_status`, the detail `remarks`.
 * - Texts can end with an office or bag id ("… S.O, PO24504112000", real feeds): it joins the remarks,
 *   so one kind of scan keeps one raw_status.
 * - A 401/403 is a credentials error; a 404 that is no HTML page is the feed's "no such article".
 */
import type { Location, PollShipment, RawScan } from '../../schemas/index.ts';
import { splitDetail } from '../shared/detail.ts';
import { credentialsRejected, parseJsonOrUndefined } from '../shared/json-body.ts';
import { isRecord, textField } from '../shared/json-fields.ts';
import { pincodeOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { TokenCache, type LoginResult } from '../shared/token-cache.ts';
import { wallTime } from '../shared/wall-time.ts';
import { gramsOf } from '../shared/weights.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpRequest, NativeResponse, ParsedPoll } from '../types.ts';

export const POSTAL_LOGIN_PATH = '/v1/access/login';
export const POSTAL_TRACKING_PATH = '/v1/tracking/';

/** A token is renewed this long before the carrier says it expires. */
const TOKEN_MARGIN_MS = 60_000;
/** Lifetime assumed when the login answer does not say. */
const DEFAULT_TOKEN_LIFETIME_MS = 3_600_000;

const NOT_FOUND_MESSAGE = /not\s*found|no\s+(?:record|data|details)|invalid\s+article|does\s+not\s+exist/i;

// ---------------------------------------------------------------- request side

function loginRequest(endpoint: CarrierEndpoint): HttpRequest {
  return {
    method: 'POST',
    url: `${endpoint.baseUrl}${POSTAL_LOGIN_PATH}`,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ username: endpoint.credentials.username ?? '', password: endpoint.credentials.password ?? '' }),
    // Logging in again only issues another token: safe to repeat.
    idempotent: true,
  };
}

function trackingRequest(endpoint: CarrierEndpoint, article: string, token: string): HttpRequest {
  return {
    method: 'GET',
    url: `${endpoint.baseUrl}${POSTAL_TRACKING_PATH}${encodeURIComponent(article)}`,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
  };
}

function readLogin(response: NativeResponse, nowMs: number): LoginResult {
  if (response.status < 200 || response.status >= 300) return { failed: response };
  const json = parseJsonOrUndefined(response.body);
  const data = isRecord(json) ? json.data : undefined;
  const token = isRecord(data) ? data.access_token : undefined;
  if (typeof token !== 'string' || token === '') return { failed: response };
  const expiresIn = isRecord(data) && typeof data.expires_in === 'number' && data.expires_in > 0
    ? data.expires_in * 1000
    : DEFAULT_TOKEN_LIFETIME_MS;
  return { token, expiresAtMs: nowMs + expiresIn - TOKEN_MARGIN_MS };
}

// ---------------------------------------------------------------- parsing helpers

// The date part: "2025-08-13T00:00:00Z" (a date dressed as UTC midnight) or a bare "2025-08-13".
const POSTAL_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]00:00(?::00(?:\.0{1,9})?)?(?:Z|[+-]00:?00)?)?$/;
const CLOCK = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

/** Postal date + IST clock time → offset-less IST wall time; `fallbackTime` when the time is absent. */
export function postalWallTime(date: string | null, time: string | null, fallbackTime: string | null): string | null {
  if (date === null) return null;
  const d = POSTAL_DATE.exec(date);
  const clock = time ?? fallbackTime;
  if (!d || clock === null) return null;
  const t = CLOCK.exec(clock);
  if (!t) return null;
  return wallTime(Number(d[1]), Number(d[2]), Number(d[3]), Number(t[1]), Number(t[2]), Number(t[3] ?? 0));
}

// "Item BookItem Book At Dhule ..." : a label whose last letter runs straight into "Item".
const GLUED_LABEL = /^(Item [A-Za-z ]*?[a-z])(Item\b.*)$/;

// ", PO24504112000": a trailing office or bag id (two to four letters, then at least six digits).
const TRAILING_ID = /\s*,\s*([A-Z]{2,4}\d{6,})\s*$/;

/** An event text split into its label (what rules map) and the detail the feed attached to it. */
export function splitPostalEvent(event: string): { label: string; detail: string | null } {
  const text = event.replace(/\s+/g, ' ').trim();
  const id = TRAILING_ID.exec(text);
  const clean = id ? text.slice(0, id.index).trim() : text;
  const glued = GLUED_LABEL.exec(clean);
  const split = glued ? { label: glued[1]!.trim(), detail: glued[2]!.trim() } : splitDetail(clean) ?? { label: clean, detail: null };
  if (!id || split.label === '') return split;
  return { label: split.label, detail: split.detail ? `${split.detail}, ${id[1]}` : id[1]! };
}

function place(office: string | null, pincode: string | null): Location | null {
  if (office === null && pincode === null) return null;
  // The postal feed names offices and pincodes only; city and state are not given.
  return { office, city: null, state: null, pincode };
}

function serviceType(articleType: string | null): string | null {
  if (articleType === null) return null;
  if (/speed/i.test(articleType)) return 'speed_post';
  if (/express/i.test(articleType)) return 'express';
  if (/parcel|regist|letter|ordinary/i.test(articleType)) return 'surface';
  return null;
}

function postalShipment(booking: Record<string, unknown>): PollShipment {
  return {
    origin: place(textField(booking, 'booked_at'), pincodeOf(textField(booking, 'origin_pincode'))),
    destination: place(textField(booking, 'delivery_location'), pincodeOf(textField(booking, 'destination_pincode'))),
    service_type: serviceType(textField(booking, 'article_type')),
    // Article weight in grams ("500", "500.00" or a number).
    weight_grams: gramsOf(textField(booking, 'weight')),
    booked_at: postalWallTime(textField(booking, 'booked_on'), textField(booking, 'booking_time'), '00:00:00'),
    // A date-only promise means "by the end of that day".
    estimated_delivery_at: postalWallTime(textField(booking, 'edd'), textField(booking, 'edd_time'), '23:59:59'),
  };
}

const articleKey = (value: string) => value.replace(/[^A-Za-z0-9]/g, '').toUpperCase();

/** The `data[]` entry of this article (the bulk form answers several). */
function entryFor(awb: string, data: unknown[]): Record<string, unknown> | null | 'other' {
  const entries = data.filter(isRecord);
  if (entries.length === 0) return null;
  for (const entry of entries) {
    const booking = entry.booking_details;
    const article = isRecord(booking) ? textField(booking, 'article_number') : null;
    if (article === null || articleKey(article) === articleKey(awb)) return entry;
  }
  return 'other';
}

/** The scan of one tracking detail, or the name of the field that could not be read. */
function toScan(detail: unknown): RawScan | string {
  if (!isRecord(detail)) return '';
  const event = textField(detail, 'event');
  if (event === null) return '.event';
  const occurredAt = postalWallTime(textField(detail, 'date'), textField(detail, 'time'), null);
  if (occurredAt === null) return '.date/time';
  const { label, detail: remarks } = splitPostalEvent(event);
  if (label === '') return '.event';
  return { occurred_at: occurredAt, raw_status: label, raw_code: null, remarks, location: textField(detail, 'office') };
}

const fail = (error: string): ParsedPoll => ({ outcome: 'error', error });

function parseUnsafe(awb: string, response: NativeResponse): ParsedPoll {
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  if (response.status === 404) return response.body.trim().startsWith('<') ? fail('HTTP 404') : { outcome: 'not_found' };
  if (response.status < 200 || response.status >= 300) return fail(`HTTP ${response.status}`);
  if (response.body.trim() === '') return fail('empty body');
  const json = parseJsonOrUndefined(response.body);
  if (json === undefined) return fail('invalid JSON');
  if (!isRecord(json)) return fail('unexpected body');
  if (json.success === false) {
    const message = textField(json, 'message') ?? '';
    return NOT_FOUND_MESSAGE.test(message) ? { outcome: 'not_found' } : fail('carrier reported a failure');
  }
  if (!Array.isArray(json.data)) return fail('no data array');
  if (json.data.length === 0) return { outcome: 'not_found' };
  const entry = entryFor(awb, json.data);
  if (entry === null) return fail('no article entry');
  if (entry === 'other') return fail('answer is for another article');
  if (!Array.isArray(entry.tracking_details)) return fail('no tracking_details');

  const scans: RawScan[] = [];
  const at = json.data.indexOf(entry);
  for (const [i, detail] of entry.tracking_details.entries()) {
    const scan = toScan(detail);
    if (typeof scan === 'string') return fail(`unreadable data.${at}.tracking_details.${i}${scan}`);
    scans.push(scan);
  }
  const shipment = isRecord(entry.booking_details) ? postalShipment(entry.booking_details) : null;
  return { outcome: 'ok', shipment, scans };
}

/** Native postal answer → ParsedPoll. Never throws. */
export const parsePostal = neverThrows(parseUnsafe, 'body');

/**
 * The postal adapter for `slug`. Each adapter keeps its own tokens, per base URL and user, and logs
 * in again once when the carrier rejects a cached token.
 */
export function createPostalAdapter(slug: string, now: () => number = Date.now): CarrierAdapter {
  const tokens = new TokenCache(now);
  return {
    slug,
    fetch(awb, endpoint, send) {
      const key = `${endpoint.baseUrl}|${endpoint.credentials.username ?? ''}`;
      const login = async () => readLogin(await send(loginRequest(endpoint)), now());
      return tokens.send(key, login, (token) => send(trackingRequest(endpoint, awb, token)));
    },
    parse: parsePostal,
  };
}
