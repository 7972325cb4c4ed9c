/**
 * One parcel as the page shows it: every word already in the page's language, every choice made
 * (promise or not, failed attempt or not, which milestones are done), so the templates only lay
 * out. Pure: the time of the view comes in as `nowMs`.
 */
import type { Milestones, NdrReason, TrackingRecord } from '../schemas/index.ts';
import { addDays, istDayOf } from '../time/ist-day.ts';
import { shownAwb } from './branding.ts';
import { type MessageKey, formatAgo, formatClock, formatDay, formatDayOf, formatTime, t } from './messages.ts';
import type { Lang, PageShipment, ScannedShipment } from './types.ts';

export interface StepView {
  label: string;
  state: 'done' | 'current' | 'next';
  /** Screen-reader words for the state ("done", "now here", "not yet"). */
  stateWords: string;
}

export interface EventView {
  datetime: string;
  time: string;
  status: string;
  text: string;
  location: string;
}

export interface ParcelView {
  status: string;
  carrierLabel: string;
  carrier: string;
  awbLabel: string;
  awb: string;
  /** "ending in 7890" for screen readers when the AWB is masked. */
  awbSpoken: string | null;
  promise: { headline: string; window: string | null } | null;
  late: string | null;
  delivered: string | null;
  ndr: { heading: string; what: string; todoHeading: string; todo: string; attempts: string } | null;
  milestonesHeading: string;
  steps: StepView[];
  updated: string | null;
  eventsHeading: string;
  eventsNone: string;
  events: EventView[];
  detailsUrl: string | null;
  detailsLabel: string;
}

const STEPS = [
  ['booked', 'booked_at'],
  ['picked_up', 'picked_up_at'],
  ['in_transit', 'in_transit_at'],
  ['out_for_delivery', 'out_for_delivery_at'],
  ['delivered', 'delivered_at'],
] as const satisfies readonly (readonly [string, keyof Milestones])[];

/** Ended without reaching the buyer, or never left: no promise to show. */
const NO_PROMISE = new Set(['delivered', 'returned', 'cancelled']);

function steps(lang: Lang, record: TrackingRecord): StepView[] {
  // A later milestone implies the earlier ones: carriers often skip "picked up" or "booked".
  let reached = -1;
  STEPS.forEach(([, field], i) => {
    if (record.milestones[field] !== null) reached = i;
  });
  if (record.is_delivered) reached = STEPS.length - 1;
  return STEPS.map(([name], i) => {
    const state = i < reached || (i === reached && record.is_delivered) ? 'done' : i === reached ? 'current' : 'next';
    const words: MessageKey = state === 'done' ? 'milestone.done' : state === 'current' ? 'milestone.current' : 'milestone.next';
    return { label: t(lang, `milestone.${name}`), state, stateWords: t(lang, words) };
  });
}

function promise(lang: Lang, record: TrackingRecord, nowMs: number): ParcelView['promise'] {
  const prediction = record.insights.prediction;
  if (!prediction || record.is_delivered || record.is_rto || NO_PROMISE.has(record.status)) return null;
  const today = istDayOf(nowMs);
  const day = prediction.delivery_date;
  const headline = day === today
    ? t(lang, 'promise.today')
    : t(lang, day === addDays(today, 1) ? 'promise.tomorrow' : 'promise.day', { day: formatDay(lang, day) });
  const last = prediction.window.p90[1];
  // A p90 window that ends on the predicted day itself says nothing more than the headline.
  const window = last && last !== day ? t(lang, 'window.p90', { date: formatDay(lang, last) }) : null;
  return { headline, window };
}

function late(lang: Lang, shipment: ScannedShipment): string | null {
  const { record } = shipment;
  if (!shipment.running_late || record.is_delivered) return null;
  const prediction = record.insights.prediction;
  const promised = shipment.promised_by ?? prediction?.promise?.promised_by ?? null;
  if (prediction && promised) {
    return t(lang, 'late.promised', { promised: formatDay(lang, promised), day: formatDay(lang, prediction.delivery_date) });
  }
  if (prediction) return t(lang, 'late.expected', { day: formatDay(lang, prediction.delivery_date) });
  return t(lang, 'late.plain');
}

/** The reason of the latest failed attempt, while the parcel waits after it. */
function ndr(lang: Lang, record: TrackingRecord): ParcelView['ndr'] {
  if (record.is_delivered || record.insights.current_stage !== 'delivery_attempted') return null;
  const failed = record.delivery_attempts.attempts.filter((a) => a.outcome === 'failed');
  const latestEvent = record.events.reduce<TrackingRecord['events'][number] | null>(
    (best, e) => (e.reason_code && (!best || e.timestamp > best.timestamp) ? e : best), null);
  const reason: NdrReason = failed.at(-1)?.reason_code ?? latestEvent?.reason_code ?? 'other';
  return {
    heading: t(lang, 'ndr.heading'),
    what: t(lang, `ndr.${reason}.what`),
    todoHeading: t(lang, 'ndr.todo_heading'),
    todo: t(lang, `ndr.${reason}.do`),
    attempts: t(lang, 'ndr.attempts', { count: Math.max(1, failed.length) }),
  };
}

/**
 * The record's status in words, told more plainly where the stage knows more: a failed attempt is
 * `exception` to the API, and a parcel on its way back is not "in transit" to its buyer.
 */
function headline(lang: Lang, record: TrackingRecord): string {
  if (record.is_delivered) return t(lang, 'status.delivered');
  const stage = record.insights.current_stage;
  if (stage === 'delivery_attempted') return t(lang, 'status.attempt_failed');
  if (stage === 'rto_in_transit') return t(lang, 'status.returning');
  return t(lang, `status.${record.status}`);
}

/** An event's status in words; its code says more for a failed attempt or a return. */
function eventWords(lang: Lang, e: TrackingRecord['events'][number]): string {
  if (e.code === 'delivery_attempted') return t(lang, 'status.attempt_failed');
  if (e.code === 'rto_initiated') return t(lang, 'status.returning');
  return t(lang, `status.${e.status}`);
}

function events(lang: Lang, record: TrackingRecord, hide: (text: string) => string): EventView[] {
  return [...record.events]
    .sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0))
    .map((e) => ({
      datetime: e.timestamp,
      time: formatTime(lang, e.timestamp),
      status: eventWords(lang, e),
      text: hide(e.description || e.status_text),
      location: hide(e.location),
    }));
}

export function parcelView(lang: Lang, shipment: PageShipment, mask: boolean, nowMs: number): ParcelView {
  if (shipment.record === null) return awaitingView(lang, shipment, mask);
  const { record } = shipment;
  const awb = shownAwb(record.awb, mask);
  // A carrier's text may repeat the number itself; a masked page hides it there too.
  const hide = (text: string) => (mask && record.awb.length > 4 ? text.split(record.awb).join(awb.text) : text);
  const latest = record.events.reduce<string | null>((max, e) => (max === null || e.timestamp > max ? e.timestamp : max), null)
    ?? record.last_updated_at;
  const deliveredAt = record.is_delivered ? (record.delivered_at ?? record.milestones.delivered_at) : null;
  return {
    ...parcelFrame(lang, shipment, awb),
    status: headline(lang, record),
    promise: promise(lang, record, nowMs),
    late: late(lang, shipment),
    delivered: deliveredAt ? t(lang, 'delivered.on', { day: formatDayOf(lang, deliveredAt), time: formatClock(lang, deliveredAt) }) : null,
    ndr: ndr(lang, record),
    steps: steps(lang, record),
    updated: deliveredAt ? null : t(lang, 'updated.last', { ago: formatAgo(lang, latest, nowMs), time: formatTime(lang, latest) }),
    events: events(lang, record, hide),
  };
}

/** What every parcel shows whatever its record: labels, the carrier, the AWB as the shop wants it printed. */
function parcelFrame(lang: Lang, shipment: PageShipment, awb: ReturnType<typeof shownAwb>) {
  return {
    carrierLabel: t(lang, 'carrier.label'),
    carrier: shipment.carrier_name || (shipment.record === null ? shipment.carrier : shipment.record.carrier),
    awbLabel: t(lang, 'awb.label'),
    awb: awb.text,
    awbSpoken: awb.last4 === null ? null : t(lang, 'awb.masked', { last4: awb.last4 }),
    milestonesHeading: t(lang, 'milestones.heading'),
    eventsHeading: t(lang, 'events.heading'),
    eventsNone: t(lang, 'events.none'),
    detailsUrl: shipment.page_url ?? null,
    detailsLabel: t(lang, 'order.details'),
  };
}

/** A watched number the carrier has not scanned yet: waiting for its first update, nothing reached, nothing promised. */
function awaitingView(lang: Lang, shipment: PageShipment & { record: null }, mask: boolean): ParcelView {
  return {
    ...parcelFrame(lang, shipment, shownAwb(shipment.awb, mask)),
    status: t(lang, 'status.pending'),
    promise: null,
    late: null,
    delivered: null,
    ndr: null,
    steps: STEPS.map(([name]) => ({ label: t(lang, `milestone.${name}`), state: 'next', stateWords: t(lang, 'milestone.next') })),
    updated: null,
    events: [],
  };
}
