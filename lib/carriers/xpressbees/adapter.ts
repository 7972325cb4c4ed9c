/**
 * Xpressbees (last mile). `GET <base>/api/shipments2/track/<awb>` with `Authorization: Bearer
 * <token>`; credential used: `token`.
 *
 * Answer (carrier-formats.md): `{ status: true, data: { history[]{event_time "%Y-%m-%d %H:%M" IST,
 * location "A, B, C", message} } }`, newest first; an unknown number is `{ status: false, message }`.
 * *Unconfirmed*, decided here: header fields `data.awb_number`, `origin` / `destination`
 * ("City, State, 380001"), `booking_date` and `expected_delivery_date` (event_time's format),
 * `package_weight` (grams), `shipment_mode` (Surface / Air), and an optional `status_code` per scan.
 * Messages may carry a detail after " - " or in a trailing "( … )" (the out-for-delivery message
 * names the delivery agent and their mobile number): the label becomes `raw_status`, the detail
 * `remarks`. Real relayed texts (carrier-formats.md, corrections) also end with a bag id after " : "
 * ("Reached at Destination Shipment BagOut From Bag : nxbg03894488"), which becomes the remark too.
 * A 401/403 is a credentials error.
 *
 * The header's `status` is trusted for a terminal outcome only (docs/engineers/carriers.md "Headers
 * trusted"): `status: "rto"` with `rto_status: "delivered"` (the return delivered to the shipper) or
 * `status: "delivered"`. Relayed histories can stop short of the outcome, so when the newest row does
 * not state it, one scan stating it is added at the newest row's time (`headerOutcome`).
 */
import type { Location, PollShipment, RawScan } from '../../schemas/index.ts';
import { splitDetail } from '../shared/detail.ts';
import { credentialsRejected, parseJsonOrUndefined } from '../shared/json-body.ts';
import { isRecord, textField } from '../shared/json-fields.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { wallTime } from '../shared/wall-time.ts';
import { gramsOf } from '../shared/weights.ts';
import type { CarrierAdapter, NativeResponse, ParsedPoll } from '../types.ts';

export const TRACK_PATH = '/api/shipments2/track/';

const NOT_FOUND_MESSAGE = /not\s*found|no\s+(?:data|record|shipment)|invalid\s+awb|does\s+not\s+exist/i;

const fail = (error: string): ParsedPoll => ({ outcome: 'error', error });

// "%Y-%m-%d %H:%M" (seconds tolerated); a bare date only where `fallbackTime` allows one.
const EVENT_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Xpressbees time → offset-less IST wall time, or null. */
function eventTime(value: string | null, fallbackTime: [number, number, number] | null): string | null {
  const m = value === null ? null : EVENT_TIME.exec(value);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const clock: [number, number, number] | null =
    m[4] === undefined ? fallbackTime : [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (clock === null) return null;
  return wallTime(year, month, day, ...clock);
}

/** "PNQ/HUB, Pune,  Maharashtra" → "PNQ/HUB, Pune, Maharashtra" (empty parts dropped). */
function scanLocation(value: string | null): string | null {
  if (value === null) return null;
  const parts = value.split(',').map((p) => p.trim()).filter((p) => p !== '');
  return parts.length === 0 ? null : parts.join(', ');
}

/** "Ahmedabad, Gujarat, 380001" → city, state, pincode. */
function place(value: string | null): Location | null {
  if (value === null) return null;
  const parts = value.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const pincode = parts.length > 0 && /^\d{6}$/.test(parts[parts.length - 1]!) ? parts.pop()! : null;
  if (parts.length === 0 && pincode === null) return null;
  return { city: parts[0] ?? null, state: parts.length > 1 ? parts[parts.length - 1]! : null, pincode };
}

function serviceType(mode: string | null): string | null {
  if (mode === null) return null;
  if (/air|express/i.test(mode)) return 'express';
  if (/surface|ground/i.test(mode)) return 'surface';
  return null;
}

function header(data: Record<string, unknown>): PollShipment | null {
  const shipment: PollShipment = {
    origin: place(textField(data, 'origin')),
    destination: place(textField(data, 'destination')),
    service_type: serviceType(textField(data, 'shipment_mode')),
    weight_grams: gramsOf(textField(data, 'package_weight')),
    booked_at: eventTime(textField(data, 'booking_date'), [0, 0, 0]),
    // A date-only promise means "by the end of that day".
    estimated_delivery_at: eventTime(textField(data, 'expected_delivery_date'), [23, 59, 59]),
  };
  return Object.values(shipment).every((value) => value === null) ? null : shipment;
}

const TRAILING_PARENTHESES = /^(.*?\S)\s*\((.*)\)$/;
/** " : nxbg03894488": a bag (or trip) id after a spaced colon at the end. */
const TRAILING_ID = /^(.*?\S)\s+:\s+([A-Za-z]{2,6}\d{5,})$/;

/** "Out for Delivery - Agent: …" / "Out for Delivery (Agent: …)" → label and detail. */
function splitMessage(message: string): { label: string; detail: string | null } {
  const dashed = splitDetail(message);
  if (dashed) return dashed;
  const bag = TRAILING_ID.exec(message);
  if (bag) return { label: bag[1]!, detail: bag[2]! };
  const parenthesised = TRAILING_PARENTHESES.exec(message);
  if (parenthesised) {
    const detail = parenthesised[2]!.trim();
    return { label: parenthesised[1]!, detail: detail === '' ? null : detail };
  }
  return { label: message, detail: null };
}

/** The scan of one history entry, or the name of the field that could not be read. */
function toScan(entry: unknown): RawScan | string {
  if (!isRecord(entry)) return '';
  const message = textField(entry, 'message');
  if (message === null) return '.message';
  const occurredAt = eventTime(textField(entry, 'event_time'), null);
  if (occurredAt === null) return '.event_time';
  const { label, detail } = splitMessage(message);
  return {
    occurred_at: occurredAt,
    raw_status: label,
    raw_code: textField(entry, 'status_code'),
    remarks: detail,
    location: scanLocation(textField(entry, 'location')),
  };
}

/** A terminal outcome as the header states it, as the scan that says it (the mapping's own code). */
interface StatedOutcome {
  raw_status: string;
  raw_code: string;
  /** The newest row already says it: the code, or a text of that outcome. */
  stated: (scan: RawScan) => boolean;
}

const DELIVERED_TEXT = /^(?:shipment\s+)?delivered\b/i;
const RTO_DELIVERED_TEXT = /^rto\s*delivered\b|returned\s+to\s+(?:seller|shipper)|delivered\s+to\s+(?:seller|shipper)/i;

const codeOf = (scan: RawScan) => scan.raw_code?.trim().toUpperCase() ?? '';

const RTO_DELIVERED: StatedOutcome = {
  raw_status: 'RTO Delivered',
  raw_code: 'RT-DL',
  // A delivery text ends a return too: the rows decide whether it was the return's.
  stated: (scan) => codeOf(scan) === 'RT-DL' || codeOf(scan) === 'DL' || RTO_DELIVERED_TEXT.test(scan.raw_status) || DELIVERED_TEXT.test(scan.raw_status),
};
const DELIVERED: StatedOutcome = {
  raw_status: 'Delivered',
  raw_code: 'DL',
  stated: (scan) => codeOf(scan) === 'DL' || DELIVERED_TEXT.test(scan.raw_status),
};

function statedOutcome(data: Record<string, unknown>): StatedOutcome | null {
  const status = textField(data, 'status')?.toLowerCase();
  if (status === 'rto' && textField(data, 'rto_status')?.toLowerCase() === 'delivered') return RTO_DELIVERED;
  if (status === 'delivered') return DELIVERED;
  return null;
}

/**
 * The scans with the header's terminal outcome added when the newest row does not state it: at the
 * newest row's time (the outcome is no earlier; its own time is not in the answer), at the newest
 * end of the list so equal times keep it last. Rows without a time never reach here.
 */
function withHeaderOutcome(scans: RawScan[], outcome: StatedOutcome | null): RawScan[] {
  if (outcome === null || scans.length === 0) return scans;
  const oldestFirst = scans[0]!.occurred_at <= scans[scans.length - 1]!.occurred_at;
  let newest = scans[0]!;
  for (const scan of scans) if (scan.occurred_at > newest.occurred_at) newest = scan;
  if (outcome.stated(newest)) return scans;
  const stated: RawScan = {
    occurred_at: newest.occurred_at,
    raw_status: outcome.raw_status,
    raw_code: outcome.raw_code,
    remarks: 'Stated by the shipment status; no history row yet',
    location: null,
  };
  return oldestFirst ? [...scans, stated] : [stated, ...scans];
}

const awbKey = (value: string) => value.replace(/[^A-Za-z0-9]/g, '').toUpperCase();

function parseUnsafe(awb: string, response: NativeResponse): ParsedPoll {
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  if (response.status === 404) return response.body.trim().startsWith('<') ? fail('HTTP 404') : { outcome: 'not_found' };
  if (response.status < 200 || response.status >= 300) return fail(`HTTP ${response.status}`);
  if (response.body.trim() === '') return fail('empty body');
  const json = parseJsonOrUndefined(response.body);
  if (json === undefined) return fail('invalid JSON');
  if (!isRecord(json)) return fail('unexpected body');
  if (json.status === false) {
    return NOT_FOUND_MESSAGE.test(textField(json, 'message') ?? '') ? { outcome: 'not_found' } : fail('carrier reported a failure');
  }
  if (json.status !== true || !isRecord(json.data)) return fail('no data object');
  const data = json.data;
  const number = textField(data, 'awb_number');
  if (number !== null && awbKey(number) !== awbKey(awb)) return fail('answer is for another AWB');
  if (!Array.isArray(data.history)) return fail('no history');

  const scans: RawScan[] = [];
  for (const [i, entry] of data.history.entries()) {
    const scan = toScan(entry);
    if (typeof scan === 'string') return fail(`unreadable data.history.${i}${scan}`);
    scans.push(scan);
  }
  return { outcome: 'ok', shipment: header(data), scans: withHeaderOutcome(scans, statedOutcome(data)) };
}

export const adapter: CarrierAdapter = {
  slug: 'xpressbees',
  fetch(awb, endpoint, send) {
    return send({
      method: 'GET',
      url: `${endpoint.baseUrl}${TRACK_PATH}${encodeURIComponent(awb)}`,
      headers: { authorization: `Bearer ${endpoint.credentials.token ?? ''}`, accept: 'application/json' },
    });
  },
  parse: neverThrows(parseUnsafe, 'body'),
};
