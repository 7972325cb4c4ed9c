import { redactNullable, redactText } from '../redact/index.ts';
import {
  storedAwb,
  type Attempt, type CarrierPoll, type EventCode, type Location, type Milestones, type NdrReason, type RawScan, type Stage, type Status, type TrackingEvent,
} from '../schemas/index.ts';
import { eventId, eventIdFromLegacy, legacyEventId } from './event-id.ts';
import { laneOf } from './lane.ts';
import { memoizeText } from './memo.ts';
import type { RuleSet } from './rules.ts';
import { cleanText, matchKey } from './text.ts';
import { parseCarrierTime, toUtcIso, toUtcIsoOrNull } from './time.ts';
import type { NormalizeResult, NormalizedShipment, PollTimes } from './types.ts';

const PRE_PICKUP: ReadonlySet<Status> = new Set(['pending', 'order_placed', 'awaiting_pickup', 'shipped']);
const TERMINAL_STAGES: ReadonlySet<Stage> = new Set(['delivered', 'rto_delivered', 'cancelled']);
const HUB_CODES: ReadonlySet<EventCode> = new Set(['received', 'bagged', 'dispatched']);

interface TimedScan {
  scan: RawScan;
  ms: number;
  /** `ms` as the API writes it (formatted once: toISOString is costly at 100k scans/s). */
  iso: string;
  /** Position in the carrier's own list: breaks ties between equal timestamps. */
  order: number;
}

/** One scan after mapping, in chronological order. */
interface MappedScan extends TimedScan {
  status: Status;
  code: EventCode;
  stage: Stage;
  returnLeg: boolean;
  reason: NdrReason | null;
}

/**
 * Puts scans in chronological order. Carriers list newest-first, oldest-first or shuffled; equal
 * timestamps keep the carrier's own sequence, read in the direction the carrier lists in.
 */
function chronological(scans: RawScan[]): TimedScan[] | string {
  const timed: TimedScan[] = [];
  for (let i = 0; i < scans.length; i++) {
    const scan = scans[i]!;
    const ms = parseCarrierTime(scan.occurred_at);
    if (Number.isNaN(ms)) return `scan ${i + 1} has an invalid occurred_at "${scan.occurred_at}"`;
    timed.push({ scan, ms, iso: toUtcIso(ms), order: i });
  }
  let descending = 0;
  let ascending = 0;
  for (let i = 1; i < timed.length; i++) {
    if (timed[i]!.ms < timed[i - 1]!.ms) descending++;
    else if (timed[i]!.ms > timed[i - 1]!.ms) ascending++;
  }
  const tieDirection = descending > ascending ? -1 : 1;
  return timed.sort((a, b) => a.ms - b.ms || tieDirection * (a.order - b.order));
}

/** Same status text and location, up to spelling (both scans at one instant). */
function sameScan(a: RawScan, b: RawScan): boolean {
  return matchKey(a.raw_status) === matchKey(b.raw_status) && (a.location ? matchKey(a.location) : '') === (b.location ? matchKey(b.location) : '');
}

/**
 * Exact duplicate scans (same instant, status text and location) appear once. The scans are in
 * chronological order, so a duplicate can only be among the kept scans of its own instant: most
 * scans have an instant to themselves and are compared with nothing.
 */
function withoutDuplicates(scans: TimedScan[]): TimedScan[] {
  const kept: TimedScan[] = [];
  let instantStart = 0;
  for (const timed of scans) {
    if (kept.length === 0 || kept[kept.length - 1]!.ms !== timed.ms) instantStart = kept.length;
    let duplicate = false;
    for (let i = instantStart; i < kept.length && !duplicate; i++) duplicate = sameScan(kept[i]!.scan, timed.scan);
    if (!duplicate) kept.push(timed);
  }
  return kept;
}

function stageOf(status: Status, code: EventCode, returning: boolean): Stage {
  if (status === 'cancelled') return 'cancelled';
  if (code === 'rto_delivered') return 'rto_delivered';
  if (returning && status !== 'exception') return 'rto_in_transit';
  if (status === 'exception') return code === 'delivery_attempted' ? 'delivery_attempted' : 'exception';
  if (status === 'delivered') return 'delivered';
  if (status === 'out_for_delivery') return 'out_for_delivery';
  if (PRE_PICKUP.has(status)) return 'awaiting_pickup';
  return 'in_transit';
}

function ndrText(scan: RawScan): string {
  return scan.remarks ? `${scan.remarks} ${scan.raw_status}` : scan.raw_status;
}

// One object shape for every mapped scan keeps this hot loop monomorphic (no spread copies).
function mappedScan(timed: TimedScan, status: Status, code: EventCode, stage: Stage, returnLeg: boolean, reason: NdrReason | null): MappedScan {
  return { scan: timed.scan, ms: timed.ms, iso: timed.iso, order: timed.order, status, code, stage, returnLeg, reason };
}

/** Maps scans in order, carrying status, return journey and terminal state from scan to scan. */
function mapScans(scans: TimedScan[], carrier: string, rules: RuleSet): { mapped: MappedScan[]; unmapped: number } {
  const carrierRules = rules.forCarrier(carrier);
  const mapped: MappedScan[] = [];
  let unmapped = 0;
  let status: Status = 'pending';
  let stage: Stage = 'awaiting_pickup';
  let returning = false;

  for (const timed of scans) {
    const { scan } = timed;
    const rule = carrierRules.match(scan.raw_status, scan.raw_code, scan.remarks);
    if (!rule) {
      // Unmapped: keep the previous status; the gap is counted, never dropped (decisions.md).
      unmapped++;
      mapped.push(mappedScan(timed, status, 'unknown', stage, returning, null));
      continue;
    }
    let eventStatus = rule.status;
    let code: EventCode = rule.code;
    const returnLeg = carrierRules.isReturnLeg(scan.raw_code);
    if (code === 'rto_initiated' || code === 'rto_delivered' || eventStatus === 'returned') {
      returning = true;
      eventStatus = 'returned';
    } else if (returnLeg || returning) {
      // A scan of the return journey: its first one starts the return, a delivery ends it.
      if (!returning) code = 'rto_initiated';
      else if (eventStatus === 'delivered') code = 'rto_delivered';
      returning = true;
      if (eventStatus !== 'exception' && eventStatus !== 'cancelled') eventStatus = 'returned';
    }
    const eventStage = stageOf(eventStatus, code, returning);
    const needsReason = code === 'delivery_attempted' || (code === 'exception' && eventStatus !== 'exception' && eventStatus !== 'cancelled');
    const reason = needsReason ? (rule.reason ?? rules.ndrReason(ndrText(scan))) : null;
    mapped.push(mappedScan(timed, eventStatus, code, eventStage, returning, reason));
    // A terminal state is final: a late informational scan does not reopen the shipment.
    if (!TERMINAL_STAGES.has(stage)) {
      status = eventStatus;
      stage = eventStage;
    }
  }
  return { mapped, unmapped };
}

function redactLocation(location: Location | null): Location | null {
  if (!location) return null;
  return {
    office: redactNullable(location.office ?? null),
    city: redactNullable(location.city),
    state: redactNullable(location.state),
    pincode: location.pincode,
  };
}

/** Readable place from a carrier facility name ("Amritsar_VerkaBypss_I (Punjab)" → "Amritsar VerkaBypss I (Punjab)"). */
const placeOf = memoizeText((facility: string) => cleanText(facility.replace(/_/g, ' ')));

/** The `location` an event answers for a raw scan location ('' when the carrier gave none). */
function eventLocation(rawLocation: string | null): string {
  return rawLocation ? placeOf(sanitize(rawLocation)) : '';
}

/**
 * The ids of the event a raw scan becomes (event-id.ts), without normalizing the poll: to find the
 * scan of an event among scans sharing its instant (rows.ts), and to recognize events a watch saw
 * under their legacy id (webhooks). `awb` as the record's: trimmed, uppercased.
 */
export function scanEventIds(carrier: string, awb: string, scan: RawScan): { id: string; legacyId: string } {
  const legacyId = legacyEventId(carrier, awb, parseCarrierTime(scan.occurred_at), scan.raw_status);
  return { id: eventIdFromLegacy(legacyId, eventLocation(scan.location)), legacyId };
}

/** Whitespace-cleaned text with personal data removed; every output text goes through it. */
const sanitize = memoizeText((text: string) => redactText(cleanText(text)));

function first(mapped: MappedScan[], test: (m: MappedScan) => boolean): MappedScan | null {
  for (const m of mapped) if (test(m)) return m;
  return null;
}

function firstMs(mapped: MappedScan[], test: (m: MappedScan) => boolean): number | null {
  return first(mapped, test)?.ms ?? null;
}

function firstIso(mapped: MappedScan[], test: (m: MappedScan) => boolean): string | null {
  return first(mapped, test)?.iso ?? null;
}

/**
 * A physical scan: the parcel moves in the carrier's hands (pickup or later). Booking and manifest
 * scans never count (decisions.md "transit_days_elapsed"), not even a counter booking (postal,
 * DTDC), which already means the carrier holds the parcel: transit starts at its first movement.
 */
function isPhysical(m: MappedScan): boolean {
  return m.code !== 'unknown' && m.code !== 'booked' && !PRE_PICKUP.has(m.status) && m.status !== 'cancelled';
}

/** Picked up: a physical scan, or a counter booking (status picked_up: the carrier took the parcel). */
function isPickedUp(m: MappedScan): boolean {
  return isPhysical(m) || (m.code === 'booked' && m.status === 'picked_up');
}

function milestonesOf(mapped: MappedScan[], bookedAtMs: number | null): Milestones {
  const forward = (m: MappedScan) => !m.returnLeg;
  return {
    booked_at: firstIso(mapped, (m) => m.code === 'booked') ?? toUtcIsoOrNull(bookedAtMs),
    picked_up_at: firstIso(mapped, (m) => forward(m) && isPickedUp(m)),
    in_transit_at: firstIso(mapped, (m) => forward(m) && m.status === 'in_transit'),
    out_for_delivery_at: firstIso(mapped, (m) => forward(m) && m.status === 'out_for_delivery'),
    first_attempt_at: firstIso(mapped, (m) => forward(m) && (m.code === 'delivery_attempted' || m.code === 'delivered')),
    delivered_at: firstIso(mapped, (m) => forward(m) && m.code === 'delivered'),
    rto_initiated_at: firstIso(mapped, (m) => m.returnLeg),
    rto_delivered_at: firstIso(mapped, (m) => m.code === 'rto_delivered'),
  };
}

function attemptsOf(mapped: MappedScan[]): Attempt[] {
  const attempts: Attempt[] = [];
  for (const m of mapped) {
    if (m.returnLeg) continue;
    if (m.code === 'delivery_attempted') {
      attempts.push({
        at: m.iso,
        outcome: 'failed',
        reason_code: m.reason ?? 'other',
        reason_text: sanitize(m.scan.remarks ?? m.scan.raw_status),
      });
    } else if (m.code === 'delivered') {
      attempts.push({ at: m.iso, outcome: 'delivered', reason_code: null, reason_text: null });
    }
  }
  return attempts;
}

/** Distinct in-transit facilities, not counting where the parcel was picked up or delivered. */
function hubCountOf(mapped: MappedScan[]): number {
  const pickup = first(mapped, isPickedUp)?.scan.location;
  const delivery = mapped.find((m) => m.code === 'delivered')?.scan.location;
  const excluded = new Set([pickup, delivery].filter((l): l is string => !!l).map(matchKey));
  const hubs = new Set<string>();
  for (const m of mapped) {
    if (!HUB_CODES.has(m.code) || !m.scan.location) continue;
    const key = matchKey(m.scan.location);
    if (key && !excluded.has(key)) hubs.add(key);
  }
  return hubs.size;
}

function toEvent(m: MappedScan, carrier: string, awb: string, mappingVersion: string): TrackingEvent {
  const facility = m.scan.location ? sanitize(m.scan.location) : '';
  const statusText = sanitize(m.scan.raw_status);
  const location = placeOf(facility);
  return {
    event_id: eventId(carrier, awb, m.ms, m.scan.raw_status, location),
    timestamp: m.iso,
    status: m.status,
    status_text: statusText,
    code: m.code,
    reason_code: m.reason,
    facility,
    location,
    description: m.scan.remarks ? sanitize(m.scan.remarks) : statusText,
    mapping_version: mappingVersion,
  };
}

function nullableTime(iso: string | null): number | null {
  if (iso === null) return null;
  const ms = parseCarrierTime(iso);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * `carrier_poll.v1` → the tracking record of the spec (without insights, which depend on "now").
 * Pure: the same poll and rules always give the same record.
 */
export function normalizePoll(poll: CarrierPoll, rules: RuleSet): NormalizeResult {
  return normalizePollTimed(poll, rules).result;
}

/**
 * normalizePoll, plus the epoch ms it read from the poll's times (null unless a record was found):
 * the row converter (clickhouse/rows.ts) takes them instead of parsing every time a second time.
 */
export function normalizePollTimed(poll: CarrierPoll, rules: RuleSet): { result: NormalizeResult; times: PollTimes | null } {
  if (poll.outcome === 'error') return { result: { kind: 'error', error: poll.error ?? 'carrier error' }, times: null };
  if (poll.outcome === 'not_found' || poll.scans.length === 0) return { result: { kind: 'not_found' }, times: null };

  const ordered = chronological(poll.scans);
  if (typeof ordered === 'string') return { result: { kind: 'error', error: ordered }, times: null };
  const scanMs = new Array<number>(ordered.length);
  for (const timed of ordered) scanMs[timed.order] = timed.ms;
  // A poll is read as stored (the replay reads old ones too): its AWB in the canonical form, not re-checked.
  const awb = storedAwb(poll.awb);
  const { mapped, unmapped } = mapScans(withoutDuplicates(ordered), poll.carrier, rules);
  const header = poll.shipment;
  const origin = redactLocation(header?.origin ?? null);
  const destination = redactLocation(header?.destination ?? null);
  const bookedAtMs = nullableTime(header?.booked_at ?? null);
  const milestones = milestonesOf(mapped, bookedAtMs);
  const attempts = attemptsOf(mapped);
  const events = mapped.map((m) => toEvent(m, poll.carrier, awb, rules.mappingVersion)).reverse();
  const eventMs = mapped.map((m) => m.ms).reverse();
  const polledMs = Date.parse(poll.polled_at);

  // The record's state is that of the last scan that changed it (terminal states are final).
  let stateIndex = mapped.length - 1;
  for (let i = 0; i < mapped.length; i++) {
    if (TERMINAL_STAGES.has(mapped[i]!.stage) && mapped[i]!.code !== 'unknown') { stateIndex = i; break; }
  }
  const state = mapped[stateIndex]!;
  const stateEvent = events[mapped.length - 1 - stateIndex]!;
  const latest = mapped[mapped.length - 1]!;
  const lastLocation = events.find((e) => e.location !== '')?.location ?? null;
  const firstPhysical = firstMs(mapped, isPhysical);
  const terminal = TERMINAL_STAGES.has(state.stage);

  const shipment: NormalizedShipment = {
    record: {
      awb,
      tracking_number: awb,
      carrier: poll.carrier,
      status: state.status,
      status_text: stateEvent.status_text,
      is_delivered: state.status === 'delivered',
      is_rto: mapped.some((m) => m.returnLeg),
      origin,
      destination,
      estimated_delivery_at: toUtcIsoOrNull(nullableTime(header?.estimated_delivery_at ?? null)),
      delivered_at: milestones.delivered_at,
      first_scan_at: mapped[0]!.iso,
      last_location: lastLocation,
      last_known_location: lastLocation,
      last_updated_at: latest.iso,
      last_polled_at: toUtcIso(polledMs),
      cached: false,
      stale: false,
      mapping_version: rules.mappingVersion,
      shipment: {
        service_type: header?.service_type ?? null,
        weight_grams: header?.weight_grams ?? null,
        origin,
        destination,
        booked_at: milestones.booked_at,
      },
      milestones,
      delivery_attempts: { count: attempts.length, attempts },
      events,
    },
    facts: {
      stage: state.stage,
      first_physical_scan_ms: firstPhysical,
      last_scan_ms: latest.ms,
      terminal_at_ms: terminal ? state.ms : null,
      hub_count: hubCountOf(mapped),
      unmapped_scans: unmapped,
      lane: laneOf(poll.carrier, header?.origin ?? null, header?.destination ?? null),
    },
  };
  return { result: { kind: 'found', shipment }, times: { scanMs, eventMs, polledMs } };
}
