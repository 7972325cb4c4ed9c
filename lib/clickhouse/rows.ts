/**
 * Pure converters: one carrier poll and its normalization → the rows of carrier_polls, events and
 * shipments (migrations/ holds the column types). No I/O, no clock: the writer stamps ingested_at.
 */

import { parseCarrierTime, scanEventIds, type NormalizeResult, type NormalizedShipment, type PollTimes } from '../normalize/index.ts';
import { memoizeText } from '../normalize/memo.ts';
import { DAY_MS } from '../time/index.ts';
import { redactText as redactUncached } from '../redact/index.ts';
import { storedAwb, type CarrierPoll, type RawScan } from '../schemas/index.ts';
import { toClickHouseDateTime, toClickHouseDateTimeOrNull } from './datetime.ts';
import type { KeyMode } from '../schemas/index.ts';

/** A row of `carrier_polls`, as JSONEachRow sends it (DateTime columns as 'YYYY-MM-DD hh:mm:ss' UTC). */
export interface CarrierPollRow {
  poll_id: string;
  carrier: string;
  /** Trimmed and uppercased, like every table's awb (decisions.md). */
  awb: string;
  polled_at: string;
  /** Milliseconds of polled_at (0-999): DateTime has whole seconds only. */
  polled_at_ms: number;
  source: string;
  outcome: string;
  /** 'live' (configured carriers) or 'test' (the sandbox network): the Kafka message's `mode` header. */
  mode: KeyMode;
  origin_office: string | null;
  origin_city: string | null;
  origin_state: string | null;
  origin_pincode: string | null;
  destination_office: string | null;
  destination_city: string | null;
  destination_state: string | null;
  destination_pincode: string | null;
  service_type: string | null;
  weight_grams: number | null;
  booked_at: string | null;
  estimated_delivery_at: string | null;
  /** The poll's scans verbatim (JSON array of carrier_poll.v1 scans). */
  scans_json: string;
  scan_count: number;
  /** Rules that normalized this poll. */
  mapping_version: string;
  /** The carrier's error (outcome `error`). */
  error: string | null;
  /** Why normalization failed for an `ok` poll (e.g. an unreadable scan time), else null. */
  normalize_error: string | null;
}

export interface EventRow {
  event_id: string;
  carrier: string;
  awb: string;
  occurred_at: string;
  status: string;
  code: string;
  status_text: string;
  description: string;
  facility: string;
  location: string;
  reason_code: string | null;
  /** The carrier's status text of the scan this event came from, as in the poll. */
  raw_status: string;
  raw_code: string | null;
  mapping_version: string;
  /** The poll that produced this row. */
  poll_id: string;
}

/** An event row's identity and what the mapping rules made of it: what `replay --diff` compares. */
export type MappedEvent = Pick<EventRow, 'event_id' | 'carrier' | 'awb' | 'status' | 'code' | 'reason_code'>;

export interface ShipmentRow {
  carrier: string;
  awb: string;
  /** Test-mode (sandbox) shipments are kept apart from live ones and out of lane benchmarks. */
  mode: KeyMode;
  status: string;
  stage: string;
  is_rto: 0 | 1;
  origin_pincode: string | null;
  destination_pincode: string | null;
  lane: string | null;
  first_scan_at: string;
  first_physical_scan_at: string | null;
  last_scan_at: string;
  delivered_at: string | null;
  estimated_delivery_at: string | null;
  /** First physical scan to delivery, in days, not rounded (the embedded LaneBook uses the same value). */
  transit_days: number | null;
  attempts: number;
  hub_count: number;
  unmapped_scans: number;
  /** When this state was observed: the poll's polled_at. */
  updated_at: string;
  /** ReplacingMergeTree version: polled_at in epoch ms, so the newest poll's state wins. */
  version: number;
  poll_id: string;
  mapping_version: string;
}

export interface PollRows {
  poll: CarrierPollRow;
  events: EventRow[];
  shipment: ShipmentRow | null;
}

/** Raised when a poll cannot become rows (the pipeline sends it to the DLQ with this message). */
export class RowConversionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RowConversionError';
  }
}

const UINT32_MAX = 0xffffffff;
const UINT16_MAX = 0xffff;

function timeOrNull(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const ms = parseCarrierTime(iso);
  return Number.isNaN(ms) ? null : ms;
}

function required(ms: number, what: string): string {
  try {
    return toClickHouseDateTime(ms);
  } catch (err) {
    throw new RowConversionError(`${what}: ${(err as Error).message}`);
  }
}

/** The API's 'YYYY-MM-DDThh:mm:ss.sssZ' → 'YYYY-MM-DD hh:mm:ss' without a Date round trip (hot path). */
function isoToClickHouse(iso: string, what: string): string {
  const year = Number(iso.slice(0, 4));
  if (iso.length === 24 && iso[10] === 'T' && iso[23] === 'Z' && year >= 1970 && year <= 2105) return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  return required(Date.parse(iso), what);
}

function uint16(n: number): number {
  return Math.min(Math.max(0, Math.trunc(n)), UINT16_MAX);
}

const MODES: ReadonlySet<string> = new Set<KeyMode>(['live', 'test']);

function checkedMode(mode: KeyMode): KeyMode {
  if (!MODES.has(mode)) throw new RowConversionError(`mode must be 'live' or 'test', got ${JSON.stringify(mode)}`);
  return mode;
}

/** polled_at in epoch ms: normalization's reading when given, else parsed here. */
function polledMsOf(poll: CarrierPoll, times: PollTimes | null): number {
  const polledMs = times?.polledMs ?? Date.parse(poll.polled_at);
  if (Number.isNaN(polledMs)) throw new RowConversionError(`polled_at is not a date-time: ${JSON.stringify(poll.polled_at)}`);
  return polledMs;
}

/**
 * `times`: what normalizePollTimed read from this poll (saves parsing its times again); without it
 * they are parsed here, with the same result.
 */
export function pollRow(
  poll: CarrierPoll, result: NormalizeResult, mappingVersion: string, mode: KeyMode = 'live', times: PollTimes | null = null,
): CarrierPollRow {
  const polledMs = polledMsOf(poll, times);
  const header = poll.shipment;
  const weight = header?.weight_grams ?? null;
  const origin = header?.origin;
  const destination = header?.destination;
  // Location columns written out, not spread from a helper's computed keys: one literal builds a
  // fixed-shape object, which V8 creates and later stringifies much faster.
  return {
    poll_id: poll.poll_id,
    carrier: poll.carrier,
    awb: storedAwb(poll.awb),
    polled_at: required(polledMs, 'polled_at'),
    polled_at_ms: ((polledMs % 1000) + 1000) % 1000,
    source: poll.source,
    outcome: poll.outcome,
    mode: checkedMode(mode),
    origin_office: redactNullable(origin?.office ?? null),
    origin_city: redactNullable(origin?.city ?? null),
    origin_state: redactNullable(origin?.state ?? null),
    origin_pincode: origin?.pincode ?? null,
    destination_office: redactNullable(destination?.office ?? null),
    destination_city: redactNullable(destination?.city ?? null),
    destination_state: redactNullable(destination?.state ?? null),
    destination_pincode: destination?.pincode ?? null,
    service_type: header?.service_type ?? null,
    weight_grams: weight !== null && weight >= 0 && weight <= UINT32_MAX ? weight : null,
    booked_at: toClickHouseDateTimeOrNull(timeOrNull(header?.booked_at)),
    estimated_delivery_at: toClickHouseDateTimeOrNull(timeOrNull(header?.estimated_delivery_at)),
    scans_json: JSON.stringify(poll.scans.map(redactScan)),
    scan_count: poll.scans.length,
    mapping_version: mappingVersion,
    error: redactNullable(poll.error),
    normalize_error: result.kind === 'error' && poll.outcome !== 'error' ? result.error : null,
  };
}

/**
 * Polls arrive already redacted (the carrier client removes personal data before publishing); the
 * raw texts stored here go through the same redaction again, as a second guard: personal data never
 * reaches ClickHouse (decisions.md). Redaction is idempotent, so redacted text is unchanged.
 */
// Carrier texts repeat (a few dozen statuses, locations and remarks per carrier): redact each once.
const redactText = memoizeText(redactUncached);
function redactNullable(text: string | null): string | null {
  return text === null ? null : redactText(text);
}

function redactScan(scan: RawScan): RawScan {
  return {
    occurred_at: scan.occurred_at,
    raw_status: redactText(scan.raw_status),
    raw_code: scan.raw_code,
    remarks: redactNullable(scan.remarks),
    location: redactNullable(scan.location),
  };
}

const SHARED = -1;

/** `times` as pollRow's. */
export function eventRows(poll: CarrierPoll, shipment: NormalizedShipment, times: PollTimes | null = null): EventRow[] {
  const { record } = shipment;
  const scanMs = times?.scanMs ?? poll.scans.map((scan) => parseCarrierTime(scan.occurred_at));
  const eventMs = times?.eventMs ?? record.events.map((event) => Date.parse(event.timestamp));
  // Scans by instant: an event's timestamp is its scan's instant, so a lone scan at that instant is
  // its source; only scans sharing an instant need the id (a hash) to tell them apart. The map
  // holds the index of the lone scan, or SHARED (no list per instant: this runs for every poll).
  const scanAt = new Map<number, number>();
  for (let i = 0; i < scanMs.length; i++) scanAt.set(scanMs[i]!, scanAt.has(scanMs[i]!) ? SHARED : i);
  const sourceOf = (eventId: string, ms: number): RawScan | undefined => {
    const at = scanAt.get(ms);
    if (at === undefined) return undefined;
    if (at !== SHARED) return poll.scans[at];
    // The first scan at that instant, in the poll's order, whose id is the event's.
    return poll.scans.find((scan, i) => scanMs[i] === ms && scanEventIds(poll.carrier, record.awb, scan).id === eventId);
  };
  const rows: EventRow[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < record.events.length; i++) {
    const event = record.events[i]!;
    // Scans alike up to whitespace (instant, raw status and location) give one id: stored once.
    if (seen.has(event.event_id)) continue;
    seen.add(event.event_id);
    const scan = sourceOf(event.event_id, eventMs[i]!);
    if (!scan) throw new RowConversionError(`event ${event.event_id} of ${record.carrier} ${record.awb} matches no scan of poll ${poll.poll_id}`);
    rows.push({
      event_id: event.event_id,
      carrier: record.carrier,
      awb: record.awb,
      occurred_at: isoToClickHouse(event.timestamp, `event ${event.event_id} occurred_at`),
      status: event.status,
      code: event.code,
      status_text: event.status_text,
      description: event.description,
      facility: event.facility,
      location: event.location,
      reason_code: event.reason_code,
      raw_status: redactText(scan.raw_status),
      raw_code: scan.raw_code,
      mapping_version: event.mapping_version,
      poll_id: poll.poll_id,
    });
  }
  return rows;
}

/** `times` as pollRow's. */
export function shipmentRow(poll: CarrierPoll, shipment: NormalizedShipment, mode: KeyMode = 'live', times: PollTimes | null = null): ShipmentRow {
  const { record, facts } = shipment;
  const polledMs = polledMsOf(poll, times);
  const delivered = facts.stage === 'delivered' && facts.first_physical_scan_ms !== null && facts.terminal_at_ms !== null;
  return {
    carrier: record.carrier,
    awb: record.awb,
    mode: checkedMode(mode),
    status: record.status,
    stage: facts.stage,
    is_rto: record.is_rto ? 1 : 0,
    origin_pincode: record.origin?.pincode ?? null,
    destination_pincode: record.destination?.pincode ?? null,
    lane: facts.lane,
    first_scan_at: required(Date.parse(record.first_scan_at ?? record.last_updated_at), 'first_scan_at'),
    first_physical_scan_at: toClickHouseDateTimeOrNull(facts.first_physical_scan_ms),
    last_scan_at: required(facts.last_scan_ms ?? Date.parse(record.last_updated_at), 'last_scan_at'),
    delivered_at: toClickHouseDateTimeOrNull(timeOrNull(record.delivered_at)),
    estimated_delivery_at: toClickHouseDateTimeOrNull(timeOrNull(record.estimated_delivery_at)),
    transit_days: delivered ? (facts.terminal_at_ms! - facts.first_physical_scan_ms!) / DAY_MS : null,
    attempts: uint16(record.delivery_attempts.count),
    hub_count: uint16(facts.hub_count),
    unmapped_scans: uint16(facts.unmapped_scans),
    updated_at: required(polledMs, 'polled_at'),
    version: polledMs,
    poll_id: poll.poll_id,
    mapping_version: record.mapping_version,
  };
}

/**
 * Where normalized rows go (the normalizer's sink): the batched writer, or LaneClosureSink in front
 * of it. flush() resolves once every row written before it is durably stored. Declared here, beside
 * the rows, so lib/pipeline depends on lib/clickhouse and not the other way round.
 */
export interface RowSink {
  write(rows: PollRows | readonly PollRows[]): void;
  flush(): Promise<void>;
}

/**
 * All rows one poll contributes: always its carrier_polls row; for a found shipment its events
 * (newest first, one per event_id) and its shipments row. `mode` is the Kafka message's `mode`
 * header (default 'live'). Throws RowConversionError for data ClickHouse cannot hold (a time
 * outside 1970-2106, an unknown mode). `times`: what normalizePollTimed read from the poll, if at
 * hand (the pipeline), so its times are not parsed again; the rows are the same either way.
 */
export function toRows(poll: CarrierPoll, result: NormalizeResult, mappingVersion: string, mode: KeyMode = 'live', times: PollTimes | null = null): PollRows {
  const poll_ = pollRow(poll, result, mappingVersion, mode, times);
  if (result.kind !== 'found') return { poll: poll_, events: [], shipment: null };
  return { poll: poll_, events: eventRows(poll, result.shipment, times), shipment: shipmentRow(poll, result.shipment, mode, times) };
}
