/**
 * Shree Maruti (regional surface). No API is published: the carrier's site answers a form post of
 * `docket_id` with an HTML page holding a Date / Time / Location / Status table, or the sentence
 * "No data found with this docket number." (carrier-formats.md). Everything else is *unconfirmed* and
 * decided here, in one place:
 * - `POST <base>/track-your-shipment`, form body `docket_id=<awb>`. The page is public: no
 *   credentials are used.
 * - A summary table of label / value rows ("Docket No", "Booking Date" `DD/MM/YYYY HH:MM`, "Origin"
 *   and "Destination" `City, State - 380001`, "Service", "Weight" `0.500 Kg`, "Expected Delivery").
 * - Scan rows list oldest first, Date `DD/MM/YYYY`, Time `HH:MM` (IST). The status cell may carry
 *   a detail after " - " ("Undelivered - Address Incorrect"): the label becomes `raw_status`, the
 *   detail `remarks`.
 */
import type { Location, PollShipment, RawScan } from '../../schemas/index.ts';
import { splitDetail } from '../shared/detail.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { wallTime } from '../shared/wall-time.ts';
import type { CarrierAdapter, NativeResponse, ParsedPoll } from '../types.ts';
import { pageText, readTables, type HtmlCell, type HtmlTable } from './html-table.ts';

export const TRACK_PATH = '/track-your-shipment';

const NOT_FOUND_TEXT = /no data found with this docket number/i;

const fail = (error: string): ParsedPoll => ({ outcome: 'error', error });

/** Lowercase letters and digits only: "Docket No.:" → "docketno". */
const labelKey = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

// ---------------------------------------------------------------- dates and times (IST)

const DATE = /^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$/;
const CLOCK = /^(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?$/;

/** `DD/MM/YYYY` + `HH:MM[:SS] [AM|PM]` → offset-less IST wall time, or null. */
function siteTime(date: string, time: string): string | null {
  const d = DATE.exec(date.trim());
  const t = CLOCK.exec(time.trim());
  if (!d || !t) return null;
  let hour = Number(t[1]);
  const meridiem = t[4]?.toLowerCase();
  if (meridiem !== undefined) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (meridiem === 'pm' ? 12 : 0);
  }
  return wallTime(Number(d[3]), Number(d[2]), Number(d[1]), hour, Number(t[2]), Number(t[3] ?? 0));
}

/** "18/11/2026 10:15" or a bare "18/11/2026" (then `fallbackTime`). */
function siteDateTime(value: string | undefined, fallbackTime: string): string | null {
  if (value === undefined) return null;
  const [date = '', ...rest] = value.trim().split(/\s+/);
  return siteTime(date, rest.length > 0 ? rest.join(' ') : fallbackTime);
}

// ---------------------------------------------------------------- summary fields

/** "Ahmedabad, Gujarat - 380001" → city, state and pincode. */
function siteLocation(value: string | undefined): Location | null {
  if (value === undefined || value === '') return null;
  const pin = /(?:^|[\s,-])(\d{6})\s*$/.exec(value);
  const rest = (pin ? value.slice(0, pin.index) : value).replace(/[\s,-]+$/, '');
  const parts = rest.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const city = parts[0] ?? null;
  const state = parts.length > 1 ? parts[parts.length - 1]! : null;
  if (city === null && !pin) return null;
  return { city, state, pincode: pin ? pin[1]! : null };
}

function serviceType(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (/express|air|priority/i.test(value)) return 'express';
  if (/surface|ground|road|standard/i.test(value)) return 'surface';
  return null;
}

const MAX_WEIGHT_GRAMS = 1_000_000_000;

/** "0.500 Kg", "750 gms" → grams. A bare number is kilograms, as the site weighs. */
function weightGrams(value: string | undefined): number | null {
  const match = value === undefined ? null : /^(\d+(?:\.\d+)?)\s*(kgs?|kilograms?|g|gms?|grams?)?\.?$/i.exec(value.trim());
  if (!match) return null;
  const unit = match[2]?.toLowerCase() ?? 'kg';
  const grams = Math.round(Number(match[1]) * (unit.startsWith('k') ? 1000 : 1));
  return Number.isFinite(grams) && grams <= MAX_WEIGHT_GRAMS ? grams : null;
}

/** Label / value rows of every table but the scan table. */
function summaryFields(tables: HtmlTable[], history: HtmlTable): Map<string, string> {
  const fields = new Map<string, string>();
  for (const table of tables) {
    if (table === history) continue;
    for (const row of table.rows) {
      if (row.length !== 2) continue;
      const key = labelKey(row[0]!.text);
      if (key !== '' && !fields.has(key)) fields.set(key, row[1]!.text);
    }
  }
  return fields;
}

const firstOf = (fields: Map<string, string>, keys: string[]) => {
  for (const key of keys) {
    const value = fields.get(key);
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
};

function siteShipment(fields: Map<string, string>): PollShipment | null {
  if (fields.size === 0) return null;
  return {
    origin: siteLocation(firstOf(fields, ['origin', 'from', 'bookingbranch'])),
    destination: siteLocation(firstOf(fields, ['destination', 'to', 'deliverybranch'])),
    service_type: serviceType(firstOf(fields, ['service', 'servicetype', 'mode'])),
    weight_grams: weightGrams(firstOf(fields, ['weight', 'actualweight', 'chargedweight'])),
    booked_at: siteDateTime(firstOf(fields, ['bookingdate', 'bookeddate', 'bookedon']), '00:00'),
    // A date-only promise means "by the end of that day".
    estimated_delivery_at: siteDateTime(firstOf(fields, ['expecteddelivery', 'expecteddeliverydate', 'edd']), '23:59:59'),
  };
}

// ---------------------------------------------------------------- scan table

interface Columns {
  date: number;
  time: number;
  location: number;
  status: number;
}

/** The scan table and the position of its heading row. */
function findHistory(tables: HtmlTable[]): { table: HtmlTable; headingRow: number; columns: Columns } | null {
  for (const table of tables) {
    for (let r = 0; r < table.rows.length; r++) {
      const keys = table.rows[r]!.map((cell) => labelKey(cell.text));
      const columns = { date: keys.indexOf('date'), time: keys.indexOf('time'), location: keys.indexOf('location'), status: keys.indexOf('status') };
      if (Object.values(columns).every((i) => i >= 0)) return { table, headingRow: r, columns };
    }
  }
  return null;
}

function toScan(row: HtmlCell[], columns: Columns): RawScan | null {
  const cell = (i: number) => row[i]?.text;
  const date = cell(columns.date);
  const time = cell(columns.time);
  const status = cell(columns.status);
  if (date === undefined || time === undefined || status === undefined || status === '') return null;
  const occurredAt = siteTime(date, time);
  if (occurredAt === null) return null;
  const { label, detail } = splitDetail(status) ?? { label: status, detail: null };
  const location = cell(columns.location);
  return { occurred_at: occurredAt, raw_status: label, raw_code: null, remarks: detail, location: location ? location : null };
}

const docketKey = (value: string) => value.replace(/[^A-Za-z0-9]/g, '').toUpperCase();

function parseUnsafe(awb: string, response: NativeResponse): ParsedPoll {
  if (response.status === 404) return { outcome: 'not_found' };
  if (response.status < 200 || response.status >= 300) return fail(`HTTP ${response.status}`);
  if (response.body.trim() === '') return fail('empty body');
  const tables = readTables(response.body);
  const history = findHistory(tables);
  if (history === null) {
    return NOT_FOUND_TEXT.test(pageText(response.body)) ? { outcome: 'not_found' } : fail('no tracking table in page');
  }
  if (!history.table.closed) return fail('tracking table cut off');

  const fields = summaryFields(tables, history.table);
  const docket = firstOf(fields, ['docketno', 'docketnumber', 'docket']);
  if (docket !== undefined && docketKey(docket) !== docketKey(awb)) return fail('page is for another docket');

  const scans: RawScan[] = [];
  for (const row of history.table.rows.slice(history.headingRow + 1)) {
    if (row.every((cell) => cell.text === '')) continue; // spacer rows
    // The "no data" sentence may sit in a row of the table itself.
    if (NOT_FOUND_TEXT.test(row.map((cell) => cell.text).join(' '))) continue;
    const scan = toScan(row, history.columns);
    if (scan === null) return fail(`unreadable scan row ${scans.length + 1}`);
    scans.push(scan);
  }
  if (scans.length === 0 && NOT_FOUND_TEXT.test(pageText(response.body))) return { outcome: 'not_found' };
  return { outcome: 'ok', shipment: siteShipment(fields), scans };
}

export const adapter: CarrierAdapter = {
  slug: 'shreemaruti',
  fetch(awb, endpoint, send) {
    return send({
      method: 'POST',
      url: `${endpoint.baseUrl}${TRACK_PATH}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ docket_id: awb }).toString(),
      // A look-up sent as a form post: repeating it changes nothing.
      idempotent: true,
    });
  },
  parse: neverThrows(parseUnsafe, 'page'),
};
