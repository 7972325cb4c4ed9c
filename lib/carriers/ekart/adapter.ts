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
 */
import { z } from 'zod';
import { PollShipmentSchema, RawScanSchema, type Location, type PollShipment, type RawScan } from '../../schemas/index.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'ekart';

/**
 * `event_date` and `expected_delivery_date`: "%Y-%m-%d %H:%M:%S" IST wall time. The event_date
 * format is unconfirmed; this is the one place to change it (seconds and a T separator tolerated).
 */
const EKART_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

const optionalText = z.string().nullish().catch(null);
const PlaceSchema = z
  .object({ city: optionalText, state: optionalText, pincode: z.union([z.string(), z.number()]).nullish().catch(null) })
  .nullish()
  .catch(null);

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

type Place = z.infer<typeof PlaceSchema>;

function isRealWallTime(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  if (year < 1970 || year > 2999 || hour > 23 || minute > 59 || second > 59) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** An Ekart IST wall time as offset-less ISO 8601, null when it is not one. */
function isoTime(text: string): string | null {
  const m = EKART_TIME.exec(text.trim());
  if (!m) return null;
  const [, year, month, day, hour, minute, second = '00'] = m;
  if (!isRealWallTime(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second))) return null;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}`;
}

function nonEmpty(text: string | null | undefined): string | null {
  const trimmed = text?.trim();
  return trimmed ? trimmed : null;
}

function locationOf(place: Place): Location | null {
  if (!place) return null;
  const location = {
    city: nonEmpty(place.city),
    state: nonEmpty(place.state),
    pincode: place.pincode === null || place.pincode === undefined ? null : nonEmpty(String(place.pincode)),
  };
  return location.city || location.state || location.pincode ? location : null;
}

/** The answer's entry for `awb`: keyed by the id, else the entry whose external_tracking_id is it. */
function entryFor(awb: string, body: Record<string, unknown>): unknown {
  const wanted = awb.trim().toUpperCase();
  for (const [key, value] of Object.entries(body)) if (key.trim().toUpperCase() === wanted) return value;
  for (const value of Object.values(body)) {
    const id = (value as { external_tracking_id?: unknown } | null)?.external_tracking_id;
    if (typeof id === 'string' && id.trim().toUpperCase() === wanted) return value;
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
    if (!occurredAt) return { outcome: 'error', error: `invalid event_date "${item.event_date.slice(0, 40)}"` };
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

function parseBody(awb: string, response: NativeResponse): ParsedPoll {
  const text = response.body.trim();
  if (response.status === 401 || response.status === 403) return { outcome: 'error', error: `HTTP ${response.status}: authentication failed` };
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  if (text === '') return { outcome: 'error', error: 'empty body' };
  if (text.startsWith('<')) return { outcome: 'error', error: 'HTML instead of JSON' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { outcome: 'error', error: 'invalid JSON' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { outcome: 'error', error: 'unexpected JSON shape' };
  const raw = entryFor(awb, json as Record<string, unknown>);
  if (raw === undefined) return { outcome: 'error', error: 'no entry for the tracking id' };
  if (isNoDataEntry(raw)) return { outcome: 'not_found' };
  const entry = TrackingEntrySchema.safeParse(raw);
  if (!entry.success) return { outcome: 'error', error: 'unexpected tracking entry shape' };
  return parseEntry(entry.data);
}

async function fetchTracking(awb: string, endpoint: CarrierEndpoint, send: HttpSend): Promise<NativeResponse> {
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
  parse(awb, response) {
    try {
      return parseBody(awb, response);
    } catch (err) {
      return { outcome: 'error', error: `unreadable answer: ${(err as Error).message}`.slice(0, 200) };
    }
  },
};
