/**
 * Shadowfax (last mile, second): `GET /api/v4/clients/orders/{awb}/track/` with the Django REST
 * framework's `Authorization: Token <token>`; a JSON answer of `order_details` and
 * `tracking_details[]{status, status_id, location, created, remarks}`.
 *
 * Credentials: `token`.
 *
 * Unconfirmed (carrier-formats.md names only status/status_display in order_details): the header
 * fields `pickup_details` / `drop_details` {city, state, pincode}, `promised_delivery_date` and
 * `weight` (kg), and the `created` time format. Times are read as IST when they carry no offset;
 * `tracking_details` is taken in the carrier's own order.
 */
import { z } from 'zod';
import { PollShipmentSchema, RawScanSchema, type Location, type PollShipment, type RawScan } from '../../schemas/index.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'shadowfax';

/** `2026-11-20T09:15:00`, optionally with a space for T, a fraction and an offset. */
const CREATED_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9})\d*)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Optional header values: a wrong type reads as absent rather than failing the whole answer. */
const optionalText = z.string().nullish().catch(null);
const PlaceSchema = z
  .object({ city: optionalText, state: optionalText, pincode: z.union([z.string(), z.number()]).nullish().catch(null) })
  .nullish()
  .catch(null);

const TrackingEntrySchema = z.object({
  status: z.string(),
  status_id: z.string().min(1),
  location: z.string().nullish(),
  created: z.string(),
  remarks: z.string().nullish(),
});

const TrackBodySchema = z.object({
  order_details: z.object({
    status: optionalText,
    status_display: optionalText,
    pickup_details: PlaceSchema,
    drop_details: PlaceSchema,
    promised_delivery_date: optionalText,
    weight: z.number().nonnegative().finite().nullish().catch(null),
  }),
  tracking_details: z.array(TrackingEntrySchema),
});

type Place = z.infer<typeof PlaceSchema>;

function isRealWallTime(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  if (year < 1970 || year > 2999 || hour > 23 || minute > 59 || second > 59) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The carrier's time as ISO 8601 (offset kept when given, else IST wall time), null when invalid. */
function isoTime(text: string): string | null {
  const m = CREATED_TIME.exec(text.trim());
  if (!m) return null;
  const [, year, month, day, hour, minute, second = '00', fraction, zone] = m;
  if (!isRealWallTime(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second))) return null;
  const offset = zone === undefined || zone === 'Z' ? (zone ?? '') : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${offset}`;
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

function looksLikeNoData(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const { detail, message } = body as { detail?: unknown; message?: unknown };
  const text = [detail, message].filter((v): v is string => typeof v === 'string').join(' ');
  return /not found|no order|invalid awb|does not exist/i.test(text);
}

function parseOk(body: z.infer<typeof TrackBodySchema>): ParsedPoll {
  const scans: RawScan[] = [];
  for (const entry of body.tracking_details) {
    const occurredAt = isoTime(entry.created);
    if (!occurredAt) return { outcome: 'error', error: `invalid scan time "${entry.created.slice(0, 40)}"` };
    scans.push({
      occurred_at: occurredAt,
      raw_status: entry.status,
      raw_code: entry.status_id.trim(),
      remarks: nonEmpty(entry.remarks),
      location: nonEmpty(entry.location),
    });
  }
  if (scans.length === 0) return { outcome: 'not_found' };
  const details = body.order_details;
  const edd = details.promised_delivery_date ? isoTime(details.promised_delivery_date) : null;
  const shipment: PollShipment = {
    origin: locationOf(details.pickup_details),
    destination: locationOf(details.drop_details),
    service_type: null,
    weight_grams: details.weight === null || details.weight === undefined ? null : Math.round(details.weight * 1000),
    booked_at: null,
    estimated_delivery_at: edd,
  };
  // Last guard: whatever slipped through must still be a valid carrier_poll.v1 part.
  if (!PollShipmentSchema.safeParse(shipment).success) return { outcome: 'error', error: 'invalid order_details' };
  if (!scans.every((s) => RawScanSchema.safeParse(s).success)) return { outcome: 'error', error: 'invalid tracking_details' };
  return { outcome: 'ok', shipment, scans };
}

function parseBody(response: NativeResponse): ParsedPoll {
  const text = response.body.trim();
  if (response.status === 401 || response.status === 403) return { outcome: 'error', error: `HTTP ${response.status}: authentication failed` };
  if (response.status === 404) {
    // DRF answers an unknown order with 404 and a JSON `detail`; any other 404 is not the API speaking.
    try {
      return typeof JSON.parse(text) === 'object' ? { outcome: 'not_found' } : { outcome: 'error', error: 'HTTP 404' };
    } catch {
      return { outcome: 'error', error: 'HTTP 404' };
    }
  }
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  if (text === '') return { outcome: 'error', error: 'empty body' };
  if (text.startsWith('<')) return { outcome: 'error', error: 'HTML instead of JSON' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { outcome: 'error', error: 'invalid JSON' };
  }
  const body = TrackBodySchema.safeParse(json);
  if (!body.success) {
    return looksLikeNoData(json) ? { outcome: 'not_found' } : { outcome: 'error', error: 'unexpected JSON shape' };
  }
  return parseOk(body.data);
}

async function fetchTracking(awb: string, endpoint: CarrierEndpoint, send: HttpSend): Promise<NativeResponse> {
  return send({
    method: 'GET',
    url: `${endpoint.baseUrl}/api/v4/clients/orders/${encodeURIComponent(awb)}/track/`,
    headers: { Authorization: `Token ${endpoint.credentials.token ?? ''}`, Accept: 'application/json' },
  });
}

export const adapter: CarrierAdapter = {
  slug: SLUG,
  fetch: fetchTracking,
  parse(_awb, response) {
    try {
      return parseBody(response);
    } catch (err) {
      return { outcome: 'error', error: `unreadable answer: ${(err as Error).message}`.slice(0, 200) };
    }
  },
};
