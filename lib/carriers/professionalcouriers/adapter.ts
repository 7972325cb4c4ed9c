/**
 * The Professional Couriers (branch network): `GET /TrackMobDe.ashx?podno=<cn>`, no credentials
 * (the mobile tracking handler is public). The answer is plain text, newest scan first:
 *
 *   Forwarding Details :
 *
 *   19/11/2026    Time : 14:02:36
 *   City : Tiruvannamalai   WayNo : ITMI1505876
 *   Activity : Despatched to Tiruvannamalai - MTP
 *   Pieces : 1   Weight : 0.1
 *
 * An unknown number gets the "Forwarding Details :" header alone. Lines may end CRLF or LF, spacing
 * varies and City / Pieces lines may be missing; a block needs its date line and Activity. A second
 * layout exists (carrier-formats.md, corrections): a status line before "Forwarding Details :",
 * two-space indents with trailing spaces, and City and WayNo on lines of their own; both are read
 * (lines before the header are the status summary, which the scans already tell). The
 * format gives no origin / destination / EDD and no remarks field (failed-attempt reasons are part
 * of the Activity text); Weight is in kg.
 */
import { PollShipmentSchema, RawScanSchema, type PollShipment, type RawScan } from '../../schemas/index.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { isPlausibleYear, wallTime } from '../shared/wall-time.ts';
import type { CarrierAdapter, CarrierEndpoint, HttpSend, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'professionalcouriers';

const HEADER_LINE = /^forwarding\s*details\s*:?$/i;
/** `DD/MM/YYYY    Time : HH:MM:SS` (IST wall time; seconds tolerated missing). */
const DATE_LINE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})\s*time\s*:\s*(\d{1,2}):(\d{2})(?::(\d{2}))?$/i;
/** Activity text may itself hold colons ("outfordelivery: Out for Delivery - Area"). */
const ACTIVITY_LINE = /^activity\s*:\s*(.*)$/i;
/** Several `Label : value` pairs share a line: split before each known label. */
const FIELD_SPLIT = /\s+(?=(?:city|wayno|pieces|weight)\s*:)/i;
const FIELD = /^([a-z][a-z ]*?)\s*:\s*(.*)$/i;
const KILOGRAMS = /^\d+(?:\.\d+)?$/;

interface Block {
  occurredAt: string;
  city: string | null;
  activity: string | null;
  weightKg: number | null;
}

/** A date line as offset-less ISO 8601 (IST), null when the date is not a real one. */
function isoOfDateLine(match: RegExpExecArray): string | null {
  const [day, month, year, hour, minute, second] = match.slice(1, 7).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
  return isPlausibleYear(year) ? wallTime(year, month, day, hour, minute, second) : null;
}

/** Reads the blocks, or the reason the text is not a Professional Couriers answer. */
function readBlocks(text: string): { blocks: Block[]; sawHeader: boolean } | string {
  const blocks: Block[] = [];
  let sawHeader = false;
  for (const rawLine of text.split(/\r\n|\n|\r/)) {
    const line = rawLine.trim();
    if (line === '') continue;
    if (HEADER_LINE.test(line)) {
      sawHeader = true;
      continue;
    }
    const date = DATE_LINE.exec(line);
    // The second layout's status line(s) come before the header and before any scan.
    if (!sawHeader && !date && blocks.length === 0) continue;
    if (date) {
      const occurredAt = isoOfDateLine(date);
      if (!occurredAt) return `invalid date "${line.slice(0, 40)}"`;
      blocks.push({ occurredAt, city: null, activity: null, weightKg: null });
      continue;
    }
    const current = blocks.at(-1);
    const activity = ACTIVITY_LINE.exec(line);
    if (activity) {
      if (!current) return 'Activity before any date line';
      current.activity = activity[1]!.trim();
      continue;
    }
    for (const part of line.split(FIELD_SPLIT)) {
      const field = FIELD.exec(part.trim());
      if (!field) return `unrecognised line "${line.slice(0, 40)}"`;
      const label = field[1]!.replace(/\s+/g, '').toLowerCase();
      const value = field[2]!.trim();
      // Labels outside a block (or unknown ones such as WayNo and Pieces) carry nothing we keep.
      if (!current) continue;
      if (label === 'city') current.city = value || null;
      else if (label === 'weight' && KILOGRAMS.test(value)) current.weightKg = Number(value);
    }
  }
  return { blocks, sawHeader };
}

function parseText(response: NativeResponse): ParsedPoll {
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  const text = response.body.trim();
  if (text === '') return { outcome: 'error', error: 'empty body' };
  if (text.startsWith('<')) return { outcome: 'error', error: 'HTML instead of text' };
  const read = readBlocks(text);
  if (typeof read === 'string') return { outcome: 'error', error: read };
  const { blocks, sawHeader } = read;
  if (blocks.length === 0) return sawHeader ? { outcome: 'not_found' } : { outcome: 'error', error: 'no Forwarding Details' };

  const scans: RawScan[] = [];
  for (const block of blocks) {
    if (!block.activity) return { outcome: 'error', error: `scan of ${block.occurredAt} has no Activity` };
    scans.push({ occurred_at: block.occurredAt, raw_status: block.activity, raw_code: null, remarks: null, location: block.city });
  }
  const weightKg = blocks.find((b) => b.weightKg !== null)?.weightKg ?? null;
  const shipment: PollShipment | null = weightKg === null ? null : {
    origin: null,
    destination: null,
    service_type: null,
    weight_grams: Math.round(weightKg * 1000),
    booked_at: null,
    estimated_delivery_at: null,
  };
  // Last guard: whatever slipped through must still be a valid carrier_poll.v1 part.
  if (shipment && !PollShipmentSchema.safeParse(shipment).success) return { outcome: 'error', error: 'invalid weight' };
  if (!scans.every((s) => RawScanSchema.safeParse(s).success)) return { outcome: 'error', error: 'invalid scan' };
  return { outcome: 'ok', shipment, scans };
}

async function fetchTracking(awb: string, endpoint: CarrierEndpoint, send: HttpSend): Promise<NativeResponse> {
  return send({
    method: 'GET',
    url: `${endpoint.baseUrl}/TrackMobDe.ashx?podno=${encodeURIComponent(awb)}`,
    headers: { Accept: 'text/plain' },
  });
}

export const adapter: CarrierAdapter = {
  slug: SLUG,
  fetch: fetchTracking,
  parse: neverThrows((_awb, response) => parseText(response)),
};
