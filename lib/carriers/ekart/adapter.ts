/**
 * Ekart (retailer-owned logistics): `POST /v2/shipments/track` with `{"tracking_ids":[…]}`, a read
 * sent as POST (so marked idempotent). The answer is a JSON object keyed by tracking id, each entry
 * with `external_tracking_id`, `expected_delivery_date`, `history[]{status, public_description,
 * hub_name, event_date, city}` listed newest first.
 *
 * Credentials: `merchant_code` (sent as `HTTP_X_MERCHANT_CODE`) and `token` (sent as
 * `Authorization: Bearer <token>`), as the Ekart B2C API documents them.
 *
 * Unconfirmed: the raw status values, the `event_date` format (see EKART_TIME), the keying of the
 * answer by tracking id, the "no data" entry (`{"message": ...}` without history), and the header
 * fields `source` / `destination` {city, state, pincode} and `shipment_weight` (kg).
 *
 * The only Ekart answers seen for real are its public web tracking's (fixtures/SOURCES.md), read
 * too: keyed by id, `expectedDeliveryDate` and `shipmentTrackingDetails[].date` as epoch
 * milliseconds (UTC instants), `sourceCity` / `destinationCity`, `statusDetails` texts oldest first;
 * `{}` for an unknown id; `{"csrfError":…}` when refused. A text's detail after " - " is the remark.
 * WEB_PINCODE_KEYS are *unconfirmed* (the cut real excerpt shows none; the sandbox writes them so
 * lanes work). The sandbox answers in this web shape, the real one.
 */
import { z } from 'zod';
import { PollShipmentSchema, RawScanSchema, isEchoOf, type Awb, type PollShipment, type RawScan } from '../../schemas/index.ts';
import { credentialsRejected, readJsonBody } from '../shared/json-body.ts';
import { isRecord, nonEmpty } from '../shared/json-fields.ts';
import { PlaceSchema, locationOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { optionalText } from '../shared/schema-fields.ts';
import { splitDetail } from '../shared/detail.ts';
import { isPlausibleYear, wallTime } from '../shared/wall-time.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'ekart';

/**
 * `event_date` and `expected_delivery_date`: "%Y-%m-%d %H:%M:%S" IST wall time. The event_date
 * format is unconfirmed; this is the one place to change it (seconds and a T separator tolerated).
 */
const EKART_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

const HistoryEntrySchema = z.object({
  status: z.string().min(1),
  public_description: z.string().nullish(),
  hub_name: z.string().nullish(),
  event_date: z.string(),
  city: z.string().nullish(),
});

const TrackingEntrySchema = z.object({
  external_tracking_id: z.string().nullish(),
  expected_delivery_date: optionalText,
  source: PlaceSchema,
  destination: PlaceSchema,
  shipment_weight: z.number().nonnegative().finite().nullish().catch(null),
  history: z.array(HistoryEntrySchema),
});

/** Pincode keys of the web shape: *unconfirmed*, in one place. */
export const WEB_PINCODE_KEYS = { origin: 'sourcePincode', destination: 'destinationPincode' } as const;

const epochMs = z.number().finite();

const WebDetailSchema = z.object({ date: epochMs, city: z.string().nullish(), statusDetails: z.string().trim().min(1) });

const WebEntrySchema = z.object({
  expectedDeliveryDate: epochMs.nullish().catch(null),
  sourceCity: optionalText,
  destinationCity: optionalText,
  [WEB_PINCODE_KEYS.origin]: z.union([z.string(), z.number()]).nullish().catch(null),
  [WEB_PINCODE_KEYS.destination]: z.union([z.string(), z.number()]).nullish().catch(null),
  shipmentTrackingDetails: z.array(WebDetailSchema),
});

/** Epoch milliseconds as an ISO instant (UTC), null when not a plausible time. */
function epochTime(ms: number): string | null {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) || !isPlausibleYear(date.getUTCFullYear()) ? null : date.toISOString();
}

const webPlace = (city: string | null | undefined, pincode: string | number | null | undefined) => {
  const pin = pincode === null || pincode === undefined ? null : /^\d{6}$/.test(String(pincode).trim()) ? String(pincode).trim() : null;
  return city || pin ? { city: city ?? null, state: null, pincode: pin } : null;
};

function parseWebEntry(entry: z.infer<typeof WebEntrySchema>): ParsedPoll {
  const scans: RawScan[] = [];
  for (const [i, item] of entry.shipmentTrackingDetails.entries()) {
    const occurredAt = epochTime(item.date);
    if (!occurredAt) return { outcome: 'error', error: `unreadable shipmentTrackingDetails.${i}.date` };
    const { label, detail } = splitDetail(item.statusDetails) ?? { label: item.statusDetails, detail: null };
    scans.push({ occurred_at: occurredAt, raw_status: label, raw_code: null, remarks: detail, location: nonEmpty(item.city) });
  }
  if (scans.length === 0) return { outcome: 'not_found' };
  const edd = entry.expectedDeliveryDate === null || entry.expectedDeliveryDate === undefined ? null : epochTime(entry.expectedDeliveryDate);
  const shipment: PollShipment = {
    origin: webPlace(entry.sourceCity, entry[WEB_PINCODE_KEYS.origin]),
    destination: webPlace(entry.destinationCity, entry[WEB_PINCODE_KEYS.destination]),
    service_type: null,
    weight_grams: null,
    booked_at: null,
    estimated_delivery_at: edd,
  };
  if (!scans.every((s) => RawScanSchema.safeParse(s).success)) return { outcome: 'error', error: 'invalid shipmentTrackingDetails' };
  return { outcome: 'ok', shipment, scans };
}

/** An Ekart IST wall time as offset-less ISO 8601, null when it is not one. */
function isoTime(text: string): string | null {
  const m = EKART_TIME.exec(text.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
  return isPlausibleYear(year) ? wallTime(year, month, day, hour, minute, second) : null;
}

/** The answer's entry for `awb`: keyed by the id, else the entry whose external_tracking_id is it. */
function entryFor(awb: Awb, body: Record<string, unknown>): unknown {
  for (const [key, value] of Object.entries(body)) if (isEchoOf(key, awb)) return value;
  for (const value of Object.values(body)) {
    const id = (value as { external_tracking_id?: unknown } | null)?.external_tracking_id;
    if (typeof id === 'string' && isEchoOf(id, awb)) return value;
  }
  return undefined;
}

/** Ekart's per-id "no data": an entry carrying only a message / error, no history. */
function isNoDataEntry(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null || 'history' in entry) return false;
  const { message, error } = entry as { message?: unknown; error?: unknown };
  return [message, error].some((v) => typeof v === 'string' || Array.isArray(v));
}

function parseEntry(entry: z.infer<typeof TrackingEntrySchema>): ParsedPoll {
  const scans: RawScan[] = [];
  for (const item of entry.history) {
    const occurredAt = isoTime(item.event_date);
    if (!occurredAt) return { outcome: 'error', error: `unreadable history event_date "${item.event_date.slice(0, 40)}"` };
    scans.push({
      occurred_at: occurredAt,
      raw_status: item.status,
      raw_code: null,
      remarks: nonEmpty(item.public_description),
      location: nonEmpty(item.hub_name) ?? nonEmpty(item.city),
    });
  }
  if (scans.length === 0) return { outcome: 'not_found' };
  const shipment: PollShipment = {
    origin: locationOf(entry.source),
    destination: locationOf(entry.destination),
    service_type: null,
    weight_grams: entry.shipment_weight === null || entry.shipment_weight === undefined ? null : Math.round(entry.shipment_weight * 1000),
    booked_at: null,
    estimated_delivery_at: entry.expected_delivery_date ? isoTime(entry.expected_delivery_date) : null,
  };
  // Last guard: whatever slipped through must still be a valid carrier_poll.v1 part.
  if (!PollShipmentSchema.safeParse(shipment).success) return { outcome: 'error', error: 'invalid shipment header' };
  if (!scans.every((s) => RawScanSchema.safeParse(s).success)) return { outcome: 'error', error: 'invalid history' };
  return { outcome: 'ok', shipment, scans };
}

function parseBody(awb: Awb, response: NativeResponse): ParsedPoll {
  const text = response.body.trim();
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  const read = readJsonBody(text);
  if ('outcome' in read) return read;
  const { json } = read;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { outcome: 'error', error: 'unexpected JSON shape' };
  const record = json as Record<string, unknown>;
  // Real web-tracking answers (fixtures/SOURCES.md): `{}` for an unknown id, `{"csrfError":{…}}` when refused.
  if (Object.keys(record).length === 0) return { outcome: 'not_found' };
  if (isRecord(record.csrfError)) return { outcome: 'error', error: `request refused (csrfError.code ${String(record.csrfError.code ?? '?').slice(0, 40)})` };
  const raw = entryFor(awb, record);
  // An answer for other ids only is a mix-up, not Ekart saying it has nothing.
  if (raw === undefined) return { outcome: 'error', error: 'no entry for the tracking id' };
  // An empty entry is the web tracking's `{}` for that id.
  if (isNoDataEntry(raw) || (isRecord(raw) && Object.keys(raw).length === 0)) return { outcome: 'not_found' };
  const at = (error: z.ZodError) => `unexpected JSON at ${[awb, ...(error.issues[0]?.path ?? [])].join('.')}`;
  if (isRecord(raw) && 'shipmentTrackingDetails' in raw) {
    const web = WebEntrySchema.safeParse(raw);
    return web.success ? parseWebEntry(web.data) : { outcome: 'error', error: at(web.error) };
  }
  const entry = TrackingEntrySchema.safeParse(raw);
  if (!entry.success) return { outcome: 'error', error: at(entry.error) };
  return parseEntry(entry.data);
}

async function fetchTracking(awb: Awb, endpoint: CarrierEndpoint, send: HttpSend): Promise<NativeResponse> {
  return send({
    method: 'POST',
    url: `${endpoint.baseUrl}/v2/shipments/track`,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      Authorization: `Bearer ${endpoint.credentials.token ?? ''}`,
      HTTP_X_MERCHANT_CODE: endpoint.credentials.merchant_code ?? '',
    },
    body: JSON.stringify({ tracking_ids: [awb] }),
    idempotent: true,
  });
}

export const adapter: CarrierAdapter = {
  slug: SLUG,
  fetch: fetchTracking,
  parse: neverThrows(parseBody),
};
