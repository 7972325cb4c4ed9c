/**
 * Shiprocket (aggregator): a token from `POST /v1/external/auth/login` (`{"email","password"}` → JSON
 * `token`), then `GET /v1/external/courier/track/awb/{awb}` with `Authorization: Bearer <token>`, answering
 * JSON `tracking_data{track_status, shipment_track[], shipment_track_activities[], etd}` with activities
 * newest first (carrier-formats.md).
 *
 * Credentials: `email` and `password` of the API user (for the login call), or a ready `token`.
 *
 * Quirks handled (real bodies: fixtures/SOURCES.md): `sr-status` as a number, a numeric string or
 * "NA", or missing in 2019-2020 data (→ raw_code null, so the text rules decide); `sr-status-label`
 * missing; "2022-07-19 11:37:00" IST times; weights as kg strings; answers bare, keyed by the AWB
 * (`POST /courier/track/awbs`), keyed by the shipment id (`/courier/track/shipment/{id}`) or an
 * array (`/courier/track?order_id=`); "no activities" answers with `track_status` 0; errors as
 * `{"message","status_code"}` (404 → not found); the activity's `status` carries the relayed
 * courier's own code ("X-PPOM", "DLVD"), which is no remark; Xpressbees' out-for-delivery text
 * carries the agent's name, cut here (shared/agent-detail.ts).
 */
import { z } from 'zod';
import { isEchoOf, type Awb, type PollShipment, type RawScan } from '../../schemas/index.ts';
import { requireCredential } from '../shared/credentials.ts';
import { parseJsonOrUndefined, readJsonAnswer } from '../shared/json-body.ts';
import { cityPlace, pincodeOf } from '../shared/places.ts';
import { withoutAgentDetail } from '../shared/agent-detail.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { looseText as loose, unexpectedShape } from '../shared/schema-fields.ts';
import { TokenCache, type LoginResult } from '../shared/token-cache.ts';
import { wallTime } from '../shared/wall-time.ts';
import { kilogramsToGrams } from '../shared/weights.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'shiprocket';
export const LOGIN_PATH = '/v1/external/auth/login';
export const TRACK_PATH = '/v1/external/courier/track/awb';

/**
 * Pincodes: Shiprocket's documented `shipment_track` names cities only (`origin`, `destination`), so
 * these keys are *unconfirmed* (the sandbox writes them so lanes work); without them pincodes are null.
 */
export const PINCODE_KEYS = { origin: 'pickup_postcode', destination: 'delivery_postcode' } as const;

const ActivitySchema = z.object({
  date: loose,
  status: z.union([z.string(), z.number()]).nullish(),
  activity: z.string(),
  location: loose,
  'sr-status': loose,
  'sr-status-label': loose,
});

const TrackSchema = z.object({
  awb_code: loose,
  courier_name: loose,
  weight: loose,
  origin: loose,
  destination: loose,
  [PINCODE_KEYS.origin]: loose,
  [PINCODE_KEYS.destination]: loose,
  edd: loose,
});

const TrackingDataSchema = z.object({
  track_status: loose,
  shipment_track: z.array(TrackSchema).nullish(),
  shipment_track_activities: z.array(ActivitySchema).nullish(),
  etd: loose,
  error: loose,
});

type Track = z.infer<typeof TrackSchema>;
type TrackingData = z.infer<typeof TrackingDataSchema>;

/** "2022-07-19 11:37:00" (IST) → offset-less ISO; null when not a real time. */
function shiprocketTime(value: string | null): string | null {
  const m = value === null ? null : /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
  return wallTime(year, month, day, hour, minute, second);
}

/** The booked courier's product says how it travels ("Delhivery Surface", "Bluedart Air"). */
function serviceOf(courier: string | null): string | null {
  if (courier === null) return null;
  if (/surface/i.test(courier)) return 'surface';
  return /air|express/i.test(courier) ? 'express' : null;
}

function headerOf(track: Track | undefined, data: TrackingData): PollShipment {
  return {
    origin: cityPlace(track?.origin ?? null, pincodeOf(track?.[PINCODE_KEYS.origin] ?? null)),
    destination: cityPlace(track?.destination ?? null, pincodeOf(track?.[PINCODE_KEYS.destination] ?? null)),
    service_type: serviceOf(track?.courier_name ?? null),
    weight_grams: kilogramsToGrams(track?.weight ?? null),
    booked_at: null,
    estimated_delivery_at: shiprocketTime(data.etd) ?? shiprocketTime(track?.edd ?? null),
  };
}

/** `sr-status` "NA" (or blank) means Shiprocket has no code for the activity: the text rules decide. */
function codeOf(srStatus: string | null): string | null {
  return srStatus === null || srStatus.toUpperCase() === 'NA' ? null : srStatus;
}

/** A relayed courier's scan code ("X-PPOM", "DLVD", "002-S-UD"): a code, not words. */
const COURIER_CODE = /^[A-Z0-9][A-Z0-9_-]{0,15}$/;

/** The activity's `status` is the courier's remark; a repeat of the activity or label, or a bare code, is no remark. */
function remarksOf(status: string | number | null | undefined, activity: string, label: string | null): string | null {
  if (status === null || status === undefined) return null;
  const text = String(status);
  if (COURIER_CODE.test(text.trim())) return null;
  const fold = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();
  if (fold(text) === '' || fold(text) === fold(activity) || (label !== null && fold(text) === fold(label))) return null;
  return text;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when a `tracking_data` object is about `awb` (its shipment_track names it). */
function isAbout(awb: Awb, data: unknown): boolean {
  const tracks = isObject(data) && Array.isArray(data.shipment_track) ? data.shipment_track : [];
  // awb_code may be a JSON number: its digits are the echo.
  return tracks.some((t) => isObject(t) && isEchoOf(String(t.awb_code ?? ''), awb));
}

/**
 * The `tracking_data` answering `awb`: bare `{"tracking_data": …}`, keyed by the AWB or by the
 * shipment id (`{"<key>": {"tracking_data": …}}`), or an array of `{tracking_data}`; among several,
 * the one whose shipment_track names the AWB, else the first.
 */
function trackingDataOf(awb: Awb, json: unknown): unknown {
  if (isObject(json) && 'tracking_data' in json) return json.tracking_data;
  let candidates: unknown[];
  if (Array.isArray(json)) candidates = json.map((item) => (isObject(item) ? item.tracking_data : undefined));
  else if (isObject(json)) {
    const keyed = Object.entries(json).find(([key]) => isEchoOf(key, awb))?.[1];
    if (isObject(keyed)) return keyed.tracking_data;
    candidates = Object.values(json).map((item) => (isObject(item) ? item.tracking_data : undefined));
  } else return undefined;
  const present = candidates.filter((c) => c !== undefined && c !== null);
  return present.find((c) => isAbout(awb, c)) ?? present[0];
}

/** Shiprocket's error answer `{"message": "...", "status_code": 404}`: its outcome, or null when the body is no such answer. */
function errorAnswer(json: unknown): ParsedPoll | null {
  if (!isObject(json) || 'tracking_data' in json) return null;
  const code = Number(json.status_code);
  const message = typeof json.message === 'string' ? json.message.trim().slice(0, 100) : '';
  if (code === 404) return { outcome: 'not_found' };
  if (code === 401 || code === 403) return { outcome: 'error', error: `credentials rejected (status_code ${code}${message ? `: ${message}` : ''})` };
  if (Number.isFinite(code) && code >= 400) return { outcome: 'error', error: `carrier error ${code}${message ? `: ${message}` : ''}` };
  if (Object.keys(json).length === 0) return { outcome: 'error', error: 'empty answer, no tracking_data' };
  return null;
}

function readBody(awb: Awb, response: NativeResponse): ParsedPoll {
  const read = readJsonAnswer(response);
  if (!('json' in read)) return read;
  const failure = errorAnswer(read.json);
  if (failure) return failure;
  const raw = trackingDataOf(awb, read.json);
  if (raw === undefined || raw === null) return { outcome: 'error', error: 'no tracking_data' };
  const parsed = TrackingDataSchema.safeParse(raw);
  if (!parsed.success) return unexpectedShape('JSON', parsed.error);
  const data = parsed.data;
  if (data.track_status === '0') return { outcome: 'not_found' };

  const scans: RawScan[] = [];
  for (const [i, a] of (data.shipment_track_activities ?? []).entries()) {
    const occurredAt = shiprocketTime(a.date);
    if (occurredAt === null) return { outcome: 'error', error: `activity ${i + 1} has no readable date` };
    if (a.activity.trim() === '') return { outcome: 'error', error: `activity ${i + 1} has no text` };
    scans.push({
      occurred_at: occurredAt,
      raw_status: withoutAgentDetail(a.activity),
      raw_code: codeOf(a['sr-status']),
      remarks: remarksOf(a.status, a.activity, a['sr-status-label']),
      location: a.location,
    });
  }
  const tracks = data.shipment_track ?? [];
  const track = tracks.find((t) => isEchoOf(t.awb_code, awb)) ?? tracks[0];
  return { outcome: 'ok', shipment: headerOf(track, data), scans };
}

const credential = (endpoint: CarrierEndpoint, name: string) => requireCredential(SLUG, endpoint, name);

/**
 * Tokens by base URL and user: one login serves many lookups until Shiprocket rejects the token
 * (it expires after ten days).
 */
const tokens = new TokenCache();

/** The token, or the login call's failing answer (a non-2xx, so parse reports it as an error). */
async function login(endpoint: CarrierEndpoint, send: HttpSend): Promise<LoginResult> {
  const response = await send({
    method: 'POST',
    url: `${endpoint.baseUrl}${LOGIN_PATH}`,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ email: credential(endpoint, 'email'), password: credential(endpoint, 'password') }),
    // Logging in again only issues another token.
    idempotent: true,
  });
  if (response.status < 200 || response.status > 299) return { failed: response };
  const token = (parseJsonOrUndefined(response.body) as { token?: unknown } | null | undefined)?.token;
  if (typeof token !== 'string' || token.trim() === '') {
    return { failed: { status: 502, headers: response.headers, body: 'Shiprocket login returned no token' } };
  }
  return { token: token.trim() };
}

export const adapter: CarrierAdapter = {
  slug: SLUG,

  async fetch(awb, endpoint, send) {
    const track = (token: string) => send({
      method: 'GET',
      url: `${endpoint.baseUrl}${TRACK_PATH}/${encodeURIComponent(awb)}`,
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    });
    const configured = endpoint.credentials.token;
    if (configured) return track(configured);

    const cacheKey = `${endpoint.baseUrl}|${credential(endpoint, 'email')}`;
    return tokens.send(cacheKey, () => login(endpoint, send), track);
  },

  parse: neverThrows(readBody),
};
