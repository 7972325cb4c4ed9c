/**
 * The least error any prediction can have on the second generator from what a shipment's own polls
 * show (bench/prediction.ts prints it beside the model's figures and the arrival oracle's). For each
 * scored poll it draws the shipment's future from the generator's own laws (other-network-law.ts),
 * told more than any model can learn: the lane's exact typical haul. It conditions on everything the
 * poll shows: the booking, the pickup not yet made or made when, each hub scan's time and place (a
 * place on the way bounds the haul: before 30 % of it at the origin's hub, after 75 % at the
 * destination state's), no arrival yet, the last mile's attempts so far. What it is not told is what
 * no poll of this shipment shows: the line haul still ahead, whether the parcel is cash on delivery,
 * and the destination's unannounced closures (drawn from their law, 2-3 days a month, not known).
 * The posterior's median is the day of least expected absolute error, its mode the day most often
 * right: in expectation, the error and exact day beyond which no model reading one shipment's polls
 * can get. An estimate over the shipments scored: closures hit few of them, so it moves by a few
 * hundredths of a day from one sample of shipments to another (one in n, `everyNth`). Scored
 * like the backtest: every poll at or after the split of a shipment later delivered, before its
 * delivery, in IST calendar days. A floor for the figures, never a model: the model reads none of it.
 */
import type { DeliveryCalendar } from '../lib/calendar/index.ts';
import { lowerBound } from '../lib/lanes/sorted.ts';
import { closedDaysOf, haulHoursOf, lastMileOf, ORIGIN_SHARE, pickupOf, STATE_SHARE, type LawScan } from '../lib/prediction/testutil/other-network-law.ts';
import { otherNetworkPolls, type OtherShipment } from '../lib/prediction/testutil/other-network.ts';
import { dayNumberOf, dayText } from '../lib/prediction/workdays.ts';
import { seededRandom } from '../lib/random/seeded-random.ts';
import { HOUR_MS } from '../lib/time/index.ts';

export interface LawFloorOptions {
  shipments: number; days: number; seed: number; calendar: DeliveryCalendar; startMs: number; splitMs: number;
  /** Score one shipment in this many (the draws cost ~3 ms a poll). */
  everyNth: number;
  /** Futures drawn per poll. */
  draws: number;
}
export interface FloorPart { polls: number; exactDayRate: number; meanAbsoluteErrorDays: number }
export interface LawFloorFigures extends FloorPart {
  /** Per stage (in transit per where its latest scan is), as the backtest names them. */
  byStage: Record<string, FloorPart>;
  /** Polls left out: fewer than 20 drawn futures fit what they show (scans bounding the haul tighter than the bank's spacing, a rare last mile). */
  unexplained: number;
}

type Random = () => number;
const TRIES = 400;
/** Haul multipliers (haul ÷ the lane's typical), sorted: a haul bounded by scans is an exact draw from a slice of them. */
function haulBank(r: Random, size: number): Float64Array {
  return Float64Array.from({ length: size }, () => haulHoursOf(r, 1)).sort();
}

interface Journey { shipment: OtherShipment; asOfs: number[] }
interface Law { r: Random; bank: Float64Array; firstDay: number; days: number; calendar: DeliveryCalendar; draws: number }

/** The bounds on the haul (hours) that the hub scans seen by `asOfMs` and the missing arrival set. */
export function haulBounds(shipment: OtherShipment, pickupMs: number, asOfMs: number): [number, number] {
  let low = (asOfMs - pickupMs) / HOUR_MS;
  let high = Infinity;
  const sameCity = shipment.origin === shipment.destination;
  for (const scan of shipment.scans) {
    if (scan.ms <= pickupMs || scan.ms > asOfMs || (scan.kind !== 'hub' && scan.kind !== 'held')) continue;
    const hours = (scan.ms - pickupMs) / HOUR_MS;
    low = Math.max(low, hours);
    if (sameCity) continue;
    if (scan.where === 'origin') low = Math.max(low, hours / ORIGIN_SHARE);
    if (scan.where === 'relay') {
      high = Math.min(high, hours / ORIGIN_SHARE);
      if (shipment.destination.stateHub) low = Math.max(low, hours / STATE_SHARE);
    }
    if (scan.where === 'state') high = Math.min(high, hours / STATE_SHARE);
  }
  return [low, high];
}

/** One delivery day drawn from the last mile's law given what was seen by `asOfMs` (null: none drawn fits). */
function drawnDeliveryDay(law: Law, shipment: OtherShipment, arrivalMs: number, asOfMs: number, seen: readonly LawScan<string>[]): number | null {
  const state = shipment.destination.state;
  const working = (day: number) => law.calendar.isWorkingDay(dayText(day), { carrier: shipment.carrier, state });
  for (let tries = 0; tries < TRIES; tries++) {
    const closed = new Set(closedDaysOf(law.r, law.firstDay, law.days));
    const path = lastMileOf(law.r, arrivalMs, (day) => working(day) && !closed.has(day));
    const delivered = path.scans.at(-1)!;
    if (!path.delivered || delivered.ms <= asOfMs) continue;
    const before = path.scans.filter((s) => s.ms <= asOfMs);
    if (before.length !== seen.length) continue;
    if (before.every((s, i) => s.kind === seen[i]!.kind && dayNumberOf(s.ms) === dayNumberOf(seen[i]!.ms))) return dayNumberOf(delivered.ms);
  }
  return null;
}

/** Delivery days drawn for one poll, and the stage it is scored under. */
function posteriorDays(law: Law, shipment: OtherShipment, asOfMs: number): { stage: string; days: number[] } {
  const scans = shipment.scans;
  const bookedMs = scans[0]!.ms;
  const pickupMs = scans.find((s) => s.kind === 'pickup')!.ms;
  const arrivalMs = scans.find((s) => s.where === 'hub')!.ms;
  const typical = shipment.typicalHours;
  const days: number[] = [];
  const add = (day: number | null) => { if (day !== null) days.push(day); };
  if (asOfMs < pickupMs) {
    const workingAtOrigin = (day: number) => law.calendar.isWorkingDay(dayText(day), { carrier: shipment.carrier, state: shipment.origin.state });
    for (let tries = 0; days.length < law.draws && tries < law.draws * 20; tries++) {
      const pickup = pickupOf(law.r, bookedMs, workingAtOrigin);
      if (pickup.ms > asOfMs) add(drawnDeliveryDay(law, shipment, pickup.ms + haulHoursOf(law.r, typical) * HOUR_MS, asOfMs, []));
    }
    return { stage: 'awaiting_pickup', days };
  }
  if (asOfMs < arrivalMs) {
    const [low, high] = haulBounds(shipment, pickupMs, asOfMs);
    const first = lowerBound(law.bank, low / typical);
    const end = lowerBound(law.bank, high / typical);
    const step = Math.max(1, Math.floor((end - first) / law.draws));
    for (let i = first; i < end; i += step) add(drawnDeliveryDay(law, shipment, pickupMs + typical * law.bank[i]! * HOUR_MS, asOfMs, []));
    const latest = scans.filter((s) => s.ms <= asOfMs).at(-1)!;
    const where = latest.kind === 'pickup' || latest.where === 'origin' ? 'origin' : latest.where === 'relay' ? 'en_route' : 'destination_state';
    return { stage: `in_transit/${where}`, days };
  }
  const seen = scans.filter((s) => s.ms > arrivalMs && s.ms <= asOfMs);
  for (let i = 0; i < law.draws; i++) add(drawnDeliveryDay(law, shipment, arrivalMs, asOfMs, seen));
  const last = seen.at(-1)?.kind;
  return { stage: last === 'ofd' ? 'out_for_delivery' : last === 'failed' ? 'failed_attempt' : 'in_transit/destination_city', days };
}

/** The posterior's median (least expected absolute error) and mode (most often the day; the earlier of equals). */
function medianAndMode(days: number[]): { median: number; mode: number } {
  days.sort((a, b) => a - b);
  let mode = days[0]!, best = 0;
  for (let i = 0; i < days.length;) {
    let j = i;
    while (j < days.length && days[j] === days[i]) j++;
    if (j - i > best) { best = j - i; mode = days[i]!; }
    i = j;
  }
  return { median: days[Math.floor((days.length - 1) / 2)]!, mode };
}

export function lawFloor(options: LawFloorOptions): LawFloorFigures {
  const r = seededRandom(options.seed + 1);
  const law: Law = { r, bank: haulBank(r, 40_000), firstDay: dayNumberOf(options.startMs), days: options.days, calendar: options.calendar, draws: options.draws };
  const sums = new Map<string, { polls: number; exact: number; error: number }>();
  let unexplained = 0;
  const score = (journey: Journey) => {
    // Delivered within the history: a later poll shows it (the backtest cannot score the others).
    const delivered = journey.shipment.scans.find((s) => s.kind === 'delivered');
    if (!delivered || delivered.ms > journey.asOfs.at(-1)!) return;
    for (const asOfMs of journey.asOfs) {
      if (asOfMs < options.splitMs || asOfMs >= delivered.ms) continue;
      const { stage, days } = posteriorDays(law, journey.shipment, asOfMs);
      if (days.length < 20) { unexplained++; continue; }
      const { median, mode } = medianAndMode(days);
      const actual = dayNumberOf(delivered.ms);
      for (const key of ['overall', stage]) {
        const sum = sums.get(key) ?? { polls: 0, exact: 0, error: 0 };
        sums.set(key, { polls: sum.polls + 1, exact: sum.exact + (mode === actual ? 1 : 0), error: sum.error + Math.abs(median - actual) });
      }
    }
  };
  // The generator tells of each shipment just before its first poll.
  const drawn: { index: number; latest: OtherShipment | null } = { index: -1, latest: null };
  const journeys: Journey[] = [];
  for (const poll of otherNetworkPolls({ ...options, onShipment: (shipment) => { drawn.latest = shipment; drawn.index++; } })) {
    if (drawn.index % options.everyNth !== 0) continue;
    // A new shipment's first poll: the journey it replaces is complete and scored.
    if (journeys[0]?.shipment !== drawn.latest) journeys.splice(0, 1, { shipment: drawn.latest!, asOfs: [] }).forEach(score);
    journeys[0]!.asOfs.push(Date.parse(poll.polled_at));
  }
  journeys.forEach(score);
  const part = (s: { polls: number; exact: number; error: number }): FloorPart => ({ polls: s.polls, exactDayRate: s.exact / s.polls, meanAbsoluteErrorDays: s.error / s.polls });
  const overall = part(sums.get('overall') ?? { polls: 0, exact: 0, error: 0 });
  sums.delete('overall');
  return { ...overall, byStage: Object.fromEntries([...sums].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, part(v)])), unexplained };
}
