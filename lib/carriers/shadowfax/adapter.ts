/**
 * Shadowfax (last mile, second): `GET /api/v4/clients/orders/{awb}/track/` with the Django REST
 * framework's `Authorization: Token <token>`; a JSON answer of `order_details` and
 * `tracking_details[]{status, status_id, location, created, remarks}`.
 *
 * Credentials: `token`.
 *
 * Real answers (fixtures/SOURCES.md) read `{"message":"Success","data":[{…order…, "status",
 * "status_display", "pickup_details", "delivery_details", "promised_delivery_date",
 * "tracking_details":[…]}]}` with `created` in UTC ("2024-04-05T10:29:08Z"); the older documented
 * `{order_details, tracking_details}` is read too. The order-level `status` can lag the newest
 * tracking row, so only the rows tell the state. Times without an offset are read as IST;
 * `tracking_details` is taken in the carrier's own order. Unknown fields are ignored.
 */
import { z } from 'zod';
import { PollShipmentSchema, RawScanSchema, isEchoOf, type Awb, type PollShipment, type RawScan } from '../../schemas/index.ts';
import { credentialsRejected, readJsonBody } from '../shared/json-body.ts';
import { isRecord, nonEmpty } from '../shared/json-fields.ts';
import { PlaceSchema, locationOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { optionalText } from '../shared/schema-fields.ts';
import { isPlausibleYear, isRealDateTime } from '../shared/wall-time.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'shadowfax';

/** `2026-11-20T09:15:00`, optionally with a space for T, a fraction and an offset. */
const CREATED_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9})\d*)?)?(Z|[+-]\d{2}:?\d{2})?$/;

const TrackingEntrySchema = z.object({
  status: z.string(),
  status_id: z.string().min(1),
  location: z.string().nullish(),
  created: z.string(),
  remarks: z.string().nullish(),
});

const OrderSchema = z.object({
  awb_number: optionalText,
  status: optionalText,
  status_display: optionalText,
  pickup_details: PlaceSchema,
  drop_details: PlaceSchema,
  delivery_details: PlaceSchema,
  promised_delivery_date: optionalText,
  order_date: optionalText,
  weight: z.number().nonnegative().finite().nullish().catch(null),
});

/** The documented shape: the order in `order_details`, its rows beside it. */
const TrackBodySchema = z.object({ order_details: OrderSchema, tracking_details: z.array(TrackingEntrySchema) });

/** The real shape: `data[]` of orders, each carrying its own `tracking_details`. */
const DataBodySchema = z.object({ data: z.array(OrderSchema.extend({ tracking_details: z.array(TrackingEntrySchema) })) });

type Order = z.infer<typeof OrderSchema>;
type Entry = z.infer<typeof TrackingEntrySchema>;

/** The carrier's time as ISO 8601 (offset kept when given, else IST wall time), null when invalid. */
function isoTime(text: string): string | null {
  const m = CREATED_TIME.exec(text.trim());
  if (!m) return null;
  const [, year, month, day, hour, minute, second = '00', fraction, zone] = m;
  if (!isPlausibleYear(Number(year))) return null;
  if (!isRealDateTime(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second))) return null;
  const offset = zone === undefined || zone === 'Z' ? (zone ?? '') : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${offset}`;
}

function looksLikeNoData(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const { detail, message } = body as { detail?: unknown; message?: unknown };
  const text = [detail, message].filter((v): v is string => typeof v === 'string').join(' ');
  return /not found|no order|invalid awb|does not exist/i.test(text);
}

function parseOk(details: Order, rows: Entry[]): ParsedPoll {
  const scans: RawScan[] = [];
  for (const [i, entry] of rows.entries()) {
    const occurredAt = isoTime(entry.created);
    if (!occurredAt) return { outcome: 'error', error: `unreadable tracking_details.${i}.created "${entry.created.slice(0, 40)}"` };
    scans.push({
      occurred_at: occurredAt,
      raw_status: entry.status,
      raw_code: entry.status_id.trim(),
      remarks: nonEmpty(entry.remarks),
      location: nonEmpty(entry.location),
    });
  }
  if (scans.length === 0) return { outcome: 'not_found' };
  // A promised day alone means by the end of that day (IST).
  const promised = details.promised_delivery_date;
  const edd = promised ? isoTime(/^\d{4}-\d{2}-\d{2}$/.test(promised) ? `${promised}T23:59:59` : promised) : null;
  const shipment: PollShipment = {
    origin: locationOf(details.pickup_details),
    destination: locationOf(details.delivery_details ?? details.drop_details),
    service_type: null,
    weight_grams: details.weight === null || details.weight === undefined ? null : Math.round(details.weight * 1000),
    booked_at: details.order_date && /^\d{4}-\d{2}-\d{2}$/.test(details.order_date) ? isoTime(`${details.order_date}T00:00:00`) : null,
    estimated_delivery_at: edd,
  };
  // Last guard: whatever slipped through must still be a valid carrier_poll.v1 part.
  if (!PollShipmentSchema.safeParse(shipment).success) return { outcome: 'error', error: 'invalid order_details' };
  if (!scans.every((s) => RawScanSchema.safeParse(s).success)) return { outcome: 'error', error: 'invalid tracking_details' };
  return { outcome: 'ok', shipment, scans };
}

function parseBody(awb: Awb, response: NativeResponse): ParsedPoll {
  const text = response.body.trim();
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  if (response.status === 404) {
    // DRF answers an unknown order with 404 and a JSON `detail`; any other 404 is not the API speaking.
    try {
      return typeof JSON.parse(text) === 'object' ? { outcome: 'not_found' } : { outcome: 'error', error: 'HTTP 404' };
    } catch {
      return { outcome: 'error', error: 'HTTP 404' };
    }
  }
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  const read = readJsonBody(text);
  if ('outcome' in read) return read;
  const data = DataBodySchema.safeParse(read.json);
  if (data.success) {
    if (data.data.data.length === 0) return { outcome: 'not_found' };
    const order = data.data.data.find((o) => isEchoOf(o.awb_number, awb)) ?? data.data.data[0]!;
    return parseOk(order, order.tracking_details);
  }
  const body = TrackBodySchema.safeParse(read.json);
  if (body.success) return parseOk(body.data.order_details, body.data.tracking_details);
  if (looksLikeNoData(read.json)) return { outcome: 'not_found' };
  const issue = (isRecord(read.json) && 'data' in read.json ? data.error : body.error).issues[0];
  return { outcome: 'error', error: `unexpected JSON at ${issue?.path.join('.') ?? '?'}` };
}

async function fetchTracking(awb: Awb, endpoint: CarrierEndpoint, send: HttpSend): Promise<NativeResponse> {
  return send({
    method: 'GET',
    url: `${endpoint.baseUrl}/api/v4/clients/orders/${encodeURIComponent(awb)}/track/`,
    headers: { Authorization: `Token ${endpoint.credentials.token ?? ''}`, Accept: 'application/json' },
  });
}

export const adapter: CarrierAdapter = {
  slug: SLUG,
  fetch: fetchTracking,
  parse: neverThrows(parseBody),
};
