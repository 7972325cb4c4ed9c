/**
 * How good any prediction can be on the second generator (bench/prediction.ts prints it beside the
 * model's figures): an oracle told in advance when each shipment reaches its destination's hub —
 * which no poll can tell — predicts the first working day after that arrival (the same day when it
 * arrives before 07:00 IST), never before the as-of day. What it still misses is what happens after
 * the arrival: failed attempts and the last mile's unannounced closures. Scored like the backtest:
 * every poll at or after the split of a shipment later delivered, before its delivery, error in IST
 * calendar days. The oracle reads the generator's polls (the arrival scan, the delivered scan) and
 * applies its delivery rule (the next working day after an arrival, the same day before 07:00):
 * it is a floor for the figures, never a model; the model reads neither.
 */
import type { DeliveryCalendar } from '../lib/calendar/index.ts';
import { otherNetworkPolls } from '../lib/prediction/testutil/other-network.ts';
import { dayNumberOf, dayText } from '../lib/prediction/workdays.ts';
import type { CarrierPoll } from '../lib/schemas/index.ts';
import { HOUR_MS, IST_OFFSET_MS, DAY_MS } from '../lib/time/index.ts';

export interface FloorFigures { polls: number; exactDayRate: number; meanAbsoluteErrorDays: number }

/** The destination hub's scan: the city named in the shipment's destination, at a hub (not a branch). */
function arrivalMs(poll: CarrierPoll): number | null {
  const city = poll.shipment?.destination?.city?.toLowerCase();
  if (!city) return null;
  const scan = poll.scans.find((s) => {
    const at = (s.location ?? '').toLowerCase();
    return at.startsWith(city) && (at.includes('hub') && !at.includes('central') && !at.includes('delivery'));
  });
  return scan ? Date.parse(scan.occurred_at) : null;
}

function deliveredMs(poll: CarrierPoll): number | null {
  const scan = poll.scans.find((s) => s.raw_status === 'Delivered');
  return scan ? Date.parse(scan.occurred_at) : null;
}

export function oracleFloor(options: { shipments: number; days: number; seed: number; calendar: DeliveryCalendar; startMs: number; splitMs: number }): FloorFigures {
  let polls = 0;
  let exact = 0;
  let errorDays = 0;
  let journey: CarrierPoll[] = [];
  const score = () => {
    const last = journey.at(-1);
    const delivered = last ? deliveredMs(last) : null;
    const arrived = last ? arrivalMs(last) : null;
    if (!last || delivered === null || arrived === null) return;
    const state = last.shipment?.destination?.state ?? undefined;
    const working = (day: number) => options.calendar.isWorkingDay(dayText(day), { carrier: last.carrier, state });
    const hour = ((arrived + IST_OFFSET_MS) % DAY_MS) / HOUR_MS;
    for (const p of journey) {
      const asOf = Date.parse(p.polled_at);
      if (asOf < options.splitMs || asOf >= delivered) continue;
      let day = Math.max(dayNumberOf(arrived) + (hour < 7 ? 0 : 1), dayNumberOf(asOf));
      while (!working(day)) day++;
      const error = Math.abs(dayNumberOf(delivered) - day);
      polls++;
      if (error === 0) exact++;
      errorDays += error;
    }
  };
  for (const poll of otherNetworkPolls(options)) {
    if (journey.length && journey[0]!.awb !== poll.awb) { score(); journey = []; }
    journey.push(poll);
  }
  score();
  return { polls, exactDayRate: exact / polls, meanAbsoluteErrorDays: errorDays / polls };
}
