/**
 * The sandbox's scenario engine (sandbox.md): a consignment number chooses a scenario and a lane, and
 * the scenario tells a carrier-neutral story (a `SandboxShipment`) relative to the moment the number
 * was first polled (its anchor, kept by the server: ./anchors.ts), so a scan keeps its time at every
 * later poll. Pure: the same carrier, number, anchor and minute always give the same answer. Per-carrier renderers write
 * the story in each carrier's own format; delays and faults are applied by the server.
 */
import type { NdrReason } from '../schemas/index.ts';
import { istParts, istToMs } from './ist.ts';
import type { SandboxPlace, SandboxShipment, SandboxStep, ScenarioAnswer, StepKind } from './types.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { fnv1aFmix32 } from './hash32.ts';
import { isNetworkNumber, networkShipment } from './network-numbers.ts';
import { DAY_MS as DAY, HOUR_MS as HOUR, MINUTE_MS as MINUTE } from '../time/index.ts';


/** Scenario 18: how long the slow carrier takes to answer. */
export const SLOW_DELAY_MS = 3_000;
/** Scenarios 50-99 and numbers with fewer than 4 digits behave like this one (27-49: the network). */
export const DEFAULT_SCENARIO = 2;
export const SCENARIO_COUNT = 27;
const EDD_AFTER_BOOKING = 5 * DAY;
/**
 * The first movement comes this soon after the pickup. Counter carriers (postal, DTDC...) book at
 * pickup and count transit from the first movement, so it must follow closely for every carrier's
 * transit time to tell the same story.
 */
const FIRST_MOVE_AFTER_PICKUP = HOUR;
/** Delivered transit times run from pickup; the first movement leaves them within 1.5-7 days too. */
const MIN_TRANSIT = 1.5 * DAY + FIRST_MOVE_AFTER_PICKUP;
const MAX_TRANSIT = 7 * DAY;

export interface Lane {
  origin: SandboxPlace;
  destination: SandboxPlace;
  /** Sorting hubs a parcel passes on the lane, from the origin side to the destination side. */
  hubs: readonly [string, string, string];
}

const place = (city: string, state: string, pincode: string): SandboxPlace => ({ city, state, pincode });
const NEW_DELHI = place('New Delhi', 'Delhi', '110001');
const BENGALURU = place('Bengaluru', 'Karnataka', '560001');
const MUMBAI = place('Mumbai', 'Maharashtra', '400001');
const KOLKATA = place('Kolkata', 'West Bengal', '700001');
const CHENNAI = place('Chennai', 'Tamil Nadu', '600001');
const HYDERABAD = place('Hyderabad', 'Telangana', '500001');

/** `LL mod 10` → the lane of sandbox.md's table. */
export const LANES: readonly Lane[] = [
  { origin: NEW_DELHI, destination: BENGALURU, hubs: ['Delhi Bijwasan Hub', 'Nagpur Central Hub', 'Bengaluru Hoskote Hub'] },
  { origin: MUMBAI, destination: KOLKATA, hubs: ['Mumbai Bhiwandi Hub', 'Raipur Urla Hub', 'Kolkata Dankuni Hub'] },
  { origin: CHENNAI, destination: HYDERABAD, hubs: ['Chennai Sriperumbudur Hub', 'Vijayawada Gannavaram Hub', 'Hyderabad Shamshabad Hub'] },
  {
    origin: place('Ahmedabad', 'Gujarat', '380001'), destination: place('Pune', 'Maharashtra', '411001'),
    hubs: ['Ahmedabad Changodar Hub', 'Surat Kadodara Hub', 'Pune Chakan Hub'],
  },
  {
    origin: place('Jaipur', 'Rajasthan', '302001'), destination: place('Lucknow', 'Uttar Pradesh', '226001'),
    hubs: ['Jaipur Bagru Hub', 'Agra Sikandra Hub', 'Lucknow Chinhat Hub'],
  },
  { origin: place('Kochi', 'Kerala', '682001'), destination: NEW_DELHI, hubs: ['Kochi Kalamassery Hub', 'Bhopal Mandideep Hub', 'Delhi Bijwasan Hub'] },
  { origin: BENGALURU, destination: MUMBAI, hubs: ['Bengaluru Hoskote Hub', 'Hubballi Gokul Road Hub', 'Mumbai Bhiwandi Hub'] },
  { origin: KOLKATA, destination: place('Guwahati', 'Assam', '781001'), hubs: ['Kolkata Dankuni Hub', 'Siliguri Fulbari Hub', 'Guwahati Amingaon Hub'] },
  { origin: HYDERABAD, destination: CHENNAI, hubs: ['Hyderabad Shamshabad Hub', 'Nellore Hub', 'Chennai Sriperumbudur Hub'] },
  {
    origin: place('Ludhiana', 'Punjab', '141001'), destination: place('Dehradun', 'Uttarakhand', '248001'),
    hubs: ['Ludhiana Sahnewal Hub', 'Ambala Hub', 'Dehradun Selaqui Hub'],
  },
];

/**
 * Failed-delivery remarks by NDR reason (carrier-formats.md). Each still names its reason when a
 * carrier cuts remarks at 40 characters (Blue Dart does).
 */
export const FAILED_ATTEMPT_REMARKS: Readonly<Record<Exclude<NdrReason, 'other'>, readonly string[]>> = {
  customer_unavailable: ['Consignee Unavailable', 'CONSIGNEE NOT AVAILABLE;CANT DELIVER', 'PARTY NOT AVAILABLE', 'Addressee Absent'],
  address_issue: ['Bad/Incomplete Address', 'ADDRESS INCOMPLETE, CANNOT DELIVER', 'Address Incorrect', 'ADDRESS NOT FOUND'],
  refused: ['Customer Refused to accept/Order Cancelled', 'CONSIGNEE REFUSED TO ACCEPT', 'Shipment attempted - Customer refused to accept'],
  premises_closed: ['Office/Institute closed', 'RESIDENCE/OFFICE CLOSED;CANT DELIVER', 'Residence/Office Closed', 'Door Locked'],
  cod_not_ready: ['Payment not ready with customer', 'COD amount not ready with consignee', 'Cash not ready, asked to come again'],
};

/** Carrier-side holds (NDR `other`): the shipment waits, then moves on. */
export const HOLD_REMARKS: readonly string[] = [
  'Held at hub due to heavy rain',
  'Shipment held due to flood in the region',
  'Delayed due to cyclone warning',
];

/** Scenario 16: the personal data a consignee's and an agent's remarks carry. */
export const PERSONAL_DATA_REMARKS = {
  outForDelivery: 'Agent Ravi Kumar 9876543210 will deliver, share OTP 482913',
  delivered: 'Delivered to Priya Sharma (+91 98765 43210) priya.sharma@example.com',
} as const;

const LOST_REMARK = 'Shipment declared lost in transit';

/** Scenarios 05-09 in order: the reason of the latest failed attempt. */
const FAILED_ATTEMPT_SCENARIOS: Readonly<Record<number, Exclude<NdrReason, 'other'>>> = {
  5: 'customer_unavailable',
  6: 'address_issue',
  7: 'refused',
  8: 'premises_closed',
  9: 'cod_not_ready',
};

/** The digits of a consignment number in order (for postal numbers these are the 9 between the letters and IN). */
function digitsOf(awb: string): string {
  return awb.replace(/\D/g, '');
}

/** Scenario (last two digits) and lane (the two before) of a consignment number. */
export function scenarioOf(awb: string): { scenario: number; lane: number } {
  const digits = digitsOf(awb);
  if (digits.length < 4) return { scenario: DEFAULT_SCENARIO, lane: 0 };
  const scenario = Number(digits.slice(-2));
  const lane = Number(digits.slice(-4, -2));
  return { scenario: scenario < SCENARIO_COUNT ? scenario : DEFAULT_SCENARIO, lane };
}

const keyOf = (awb: string) => awb.trim().toUpperCase();
const wholeMinutes = (ms: number) => Math.round(ms / MINUTE) * MINUTE;

/** Transit time of the delivered scenarios in ms: a deterministic function of the whole number. */
function transitMs(awb: string): number {
  const fraction = fnv1aFmix32(`transit:${keyOf(awb)}`) / 4294967296;
  return wholeMinutes(MIN_TRANSIT + fraction * (MAX_TRANSIT - MIN_TRANSIT));
}

/** Days from the first physical scan (pickup) to delivery in scenarios 04, 10 and 16. */
export function deliveredTransitDays(awb: string): number {
  return transitMs(awb) / DAY;
}

/** Picks one of `options` by the number, so a number always gets the same remark. */
function pick<T>(options: readonly T[], awb: string, salt: string): T {
  return options[fnv1aFmix32(`${salt}:${keyOf(awb)}`) % options.length]!;
}

/** Builds a story's steps; `at` values are whole minutes. */
class Story {
  readonly steps: SandboxStep[] = [];

  private readonly lane: Lane;
  private readonly awb: string;
  constructor(lane: Lane, awb: string) {
    this.lane = lane;
    this.awb = awb;
  }

  add(kind: StepKind, at: number, location: string, remark: string | null = null, ndr: NdrReason | null = null): this {
    this.steps.push({ kind, at: wholeMinutes(at), location, remark, ndr });
    return this;
  }

  booked(at: number): this {
    return this.add('booked', at, this.lane.origin.city);
  }

  /**
   * Pickup at the origin city, then three hub scans at three distinct hubs: received at the
   * origin-side hub soon after pickup, at the middle hub, and at the destination-side hub (`arrivedAt`).
   */
  forwardLeg(pickedUpAt: number, arrivedAt: number): this {
    const [first, middle, last] = this.lane.hubs;
    return this.add('picked_up', pickedUpAt, this.lane.origin.city)
      .add('hub_in', pickedUpAt + FIRST_MOVE_AFTER_PICKUP, first)
      .add('hub_in', pickedUpAt + (arrivedAt - pickedUpAt) * 0.55, middle)
      .add('hub_in', arrivedAt, last);
  }

  outForDelivery(at: number, remark: string | null = null): this {
    return this.add('out_for_delivery', at, this.lane.destination.city, remark);
  }

  failedAttempt(at: number, reason: Exclude<NdrReason, 'other'>, salt: string): this {
    return this.add('attempt_failed', at, this.lane.destination.city, pick(FAILED_ATTEMPT_REMARKS[reason], this.awb, salt), reason);
  }

  delivered(at: number, remark: string | null = null): this {
    return this.add('delivered', at, this.lane.destination.city, remark);
  }

  origin(): string {
    return this.lane.origin.city;
  }

  hub(index: 0 | 1 | 2): string {
    return this.lane.hubs[index];
  }
}

interface Plot {
  steps: SandboxStep[];
  bookedAt: number;
  edd?: number;
  shuffled?: boolean;
}

/** 02: picked up 2 days ago, three hub scans, the last one 5 hours ago. */
function inTransit(story: Story, now: number): Plot {
  const pickedUpAt = now - 2 * DAY;
  const bookedAt = pickedUpAt - DAY;
  story.booked(bookedAt).forwardLeg(pickedUpAt, now - 5 * HOUR);
  return { steps: story.steps, bookedAt };
}

/** Delivered `deliveredAt`, after the number's own transit time; the OFD scan may carry a remark. */
function deliveredStory(story: Story, awb: string, deliveredAt: number, remarks: { ofd?: string; delivered?: string } = {}): Plot {
  const pickedUpAt = deliveredAt - transitMs(awb);
  const bookedAt = pickedUpAt - DAY;
  const ofdAt = deliveredAt - 3 * HOUR;
  story.booked(bookedAt)
    .forwardLeg(pickedUpAt, ofdAt - 2 * HOUR)
    .outForDelivery(ofdAt, remarks.ofd ?? null)
    .delivered(deliveredAt, remarks.delivered ?? null);
  return { steps: story.steps, bookedAt };
}

/** 03: out for delivery this morning (IST), never later than the poll. */
function outForDeliveryAt(now: number, awb: string): number {
  const p = istParts(now);
  const midnight = istToMs(Number(p.year), Number(p.month), Number(p.day));
  const morning = midnight + 8 * HOUR + (fnv1aFmix32(`ofd:${keyOf(awb)}`) % 90) * MINUTE;
  return Math.max(midnight, Math.min(morning, now - 15 * MINUTE));
}

/** Three failed attempts a day apart, then the return starts at the destination. */
function threeAttemptsThenReturn(story: Story, firstOfdAt: number): number {
  const reasons = ['customer_unavailable', 'premises_closed', 'customer_unavailable'] as const;
  reasons.forEach((reason, i) => {
    const ofdAt = firstOfdAt + i * DAY;
    story.outForDelivery(ofdAt).failedAttempt(ofdAt + 4 * HOUR, reason, `attempt${i}`);
  });
  return firstOfdAt + 3 * DAY;
}

/** A shuffle that is never in time order either way, so the scenario really tests sorting. */
function shuffledSteps(steps: SandboxStep[], awb: string): SandboxStep[] {
  const random = seededRandom(fnv1aFmix32(`shuffle:${keyOf(awb)}`));
  const out = [...steps];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  const ordered = (dir: 1 | -1) => out.every((s, i) => i === 0 || dir * (s.at - out[i - 1]!.at) > 0);
  for (let turns = 0; turns < out.length && (ordered(1) || ordered(-1)); turns++) out.push(out.shift()!);
  return out;
}

/** Scenarios 25 and 26: the stages one poll after another reveals (sandbox.md). */
export const PROGRESSIONS: Readonly<Record<number, readonly StepKind[]>> = {
  25: ['booked', 'picked_up', 'hub_in', 'out_for_delivery', 'delivered'],
  26: ['booked', 'picked_up', 'hub_in', 'out_for_delivery', 'attempt_failed', 'out_for_delivery', 'delivered'],
};

/**
 * The sandbox's only state (scenarios 25 and 26): per carrier and number, when each stage was first
 * shown. Each poll reveals the next stage at the poll's time; the stages shown keep their times, so
 * a stage's scan is the same scan at every later poll.
 */
export class ProgressBook {
  private readonly revealed = new Map<string, number[]>();

  /** A poll of `awb` at `now`: the reveal times after it (null for other scenarios). */
  poll(carrier: string, awb: string, now: number): readonly number[] | null {
    const stages = PROGRESSIONS[scenarioOf(keyOf(awb)).scenario];
    if (!stages) return null;
    const key = `${carrier}:${keyOf(awb)}`;
    const times = this.revealed.get(key) ?? [];
    if (times.length < stages.length) times.push(Math.max(now, times.at(-1) ?? now));
    this.revealed.set(key, times);
    return times;
  }

  /** The reveal times without polling (a second read of the number in the same request). */
  seen(carrier: string, awb: string): readonly number[] | null {
    return this.revealed.get(`${carrier}:${keyOf(awb)}`) ?? null;
  }
}

/**
 * A progression scenario as far as `revealed` goes. Stage i is dated (stages − 1 − i) minutes
 * before the poll that revealed it: never in the future, and a minute apart at least even when
 * polls come seconds apart, since carriers' times have minutes (scenario 26's second
 * out-for-delivery scan would otherwise be the first one again: same time, status and place).
 */
function progressionPlot(story: Story, scenario: number, revealed: readonly number[], now: number): Plot {
  const stages = PROGRESSIONS[scenario]!;
  const times = (revealed.length ? revealed : [now]).map((t, i) => t - (stages.length - 1 - i) * MINUTE);
  stages.slice(0, times.length).forEach((kind, i) => {
    const at = times[i]!;
    if (kind === 'booked') story.booked(at);
    else if (kind === 'attempt_failed') story.failedAttempt(at, 'customer_unavailable', 'progress');
    else if (kind === 'out_for_delivery') story.outForDelivery(at);
    else if (kind === 'delivered') story.delivered(at);
    else story.add(kind, at, kind === 'hub_in' ? story.hub(1) : story.origin());
  });
  return { steps: story.steps, bookedAt: times[0]! };
}

/**
 * The story of one scenario that yields a shipment, told as of `now` (the number's anchor); only
 * the scenarios that change at every poll (22, 25, 26) read the poll's own time, `polledAt`.
 */
function plotOf(scenario: number, lane: Lane, awb: string, now: number, polledAt: number, revealed: readonly number[] | null = null): Plot {
  const story = new Story(lane, awb);
  const { destination, hubs } = lane;
  if (PROGRESSIONS[scenario]) return progressionPlot(story, scenario, revealed ?? [], polledAt);
  const failedReason = FAILED_ATTEMPT_SCENARIOS[scenario];
  if (failedReason) {
    const pickedUpAt = now - 50 * HOUR;
    story.booked(pickedUpAt - DAY).forwardLeg(pickedUpAt, now - 10 * HOUR)
      .outForDelivery(now - 6 * HOUR)
      .failedAttempt(now - 2 * HOUR, failedReason, 'latest');
    return { steps: story.steps, bookedAt: pickedUpAt - DAY };
  }
  switch (scenario) {
    case 1: {
      const bookedAt = now - 27 * HOUR;
      story.booked(bookedAt);
      return { steps: story.steps, bookedAt };
    }
    case 3: {
      const ofdAt = outForDeliveryAt(now, awb);
      const arrivedAt = ofdAt - 4 * HOUR;
      const pickedUpAt = arrivedAt - 43 * HOUR;
      story.booked(pickedUpAt - DAY).forwardLeg(pickedUpAt, arrivedAt).outForDelivery(ofdAt);
      return { steps: story.steps, bookedAt: pickedUpAt - DAY };
    }
    case 4:
      return deliveredStory(story, awb, now - DAY);
    case 10: {
      const deliveredAt = now - DAY;
      const attemptAt = deliveredAt - 22 * HOUR;
      const pickedUpAt = deliveredAt - transitMs(awb);
      const bookedAt = pickedUpAt - DAY;
      story.booked(bookedAt)
        .forwardLeg(pickedUpAt, attemptAt - 5 * HOUR)
        .outForDelivery(attemptAt - 3 * HOUR)
        .failedAttempt(attemptAt, 'customer_unavailable', 'first')
        .outForDelivery(deliveredAt - 3 * HOUR)
        .delivered(deliveredAt);
      return { steps: story.steps, bookedAt };
    }
    case 11: {
      const pickedUpAt = now - 120 * HOUR;
      story.booked(pickedUpAt - DAY).forwardLeg(pickedUpAt, now - 80 * HOUR);
      return { steps: story.steps, bookedAt: pickedUpAt - DAY };
    }
    case 12: {
      const pickedUpAt = now - 7 * DAY;
      story.booked(pickedUpAt - DAY).forwardLeg(pickedUpAt, now - 5 * DAY);
      const returnAt = threeAttemptsThenReturn(story, now - 4 * DAY - 2 * HOUR);
      story.add('rto_initiated', returnAt, destination.city);
      return { steps: story.steps, bookedAt: pickedUpAt - DAY };
    }
    case 13: {
      const pickedUpAt = now - 11 * DAY;
      story.booked(pickedUpAt - DAY).forwardLeg(pickedUpAt, now - 9 * DAY);
      const returnAt = threeAttemptsThenReturn(story, now - 8 * DAY - 2 * HOUR);
      story.add('rto_initiated', returnAt, destination.city)
        .add('rto_in_transit', now - 3 * DAY, hubs[1])
        .add('rto_delivered', now - DAY, lane.origin.city);
      return { steps: story.steps, bookedAt: pickedUpAt - DAY };
    }
    case 14: {
      const bookedAt = now - 2 * DAY;
      story.booked(bookedAt).add('cancelled', now - DAY, lane.origin.city);
      return { steps: story.steps, bookedAt };
    }
    case 15: {
      const bookedAt = now - 13 * HOUR;
      story.booked(bookedAt)
        .add('picked_up', now - 11 * HOUR, lane.origin.city)
        .add('hub_out', now - 11 * HOUR + FIRST_MOVE_AFTER_PICKUP, hubs[0])
        .add('hub_in', now - 6 * HOUR, hubs[1])
        .add('hub_out', now - 4 * HOUR, hubs[1])
        .add('hub_in', now - 1 * HOUR, hubs[2]);
      return { steps: shuffledSteps(story.steps, awb), bookedAt, shuffled: true };
    }
    case 16:
      return deliveredStory(story, awb, now - DAY, {
        ofd: PERSONAL_DATA_REMARKS.outForDelivery,
        delivered: PERSONAL_DATA_REMARKS.delivered,
      });
    case 20: {
      const pickedUpAt = now - 6 * DAY;
      story.booked(pickedUpAt - DAY).forwardLeg(pickedUpAt, now - 10 * HOUR);
      return { steps: story.steps, bookedAt: pickedUpAt - DAY, edd: now - 2 * DAY };
    }
    case 21: {
      const pickedUpAt = now - 50 * HOUR;
      story.booked(pickedUpAt - DAY)
        .add('picked_up', pickedUpAt, lane.origin.city)
        .add('hub_out', pickedUpAt + FIRST_MOVE_AFTER_PICKUP, hubs[0])
        .add('hub_in', now - 36 * HOUR, hubs[1])
        .add('hold', now - 30 * HOUR, hubs[1], pick(HOLD_REMARKS, awb, 'hold'), 'other')
        .add('hub_out', now - 12 * HOUR, hubs[1])
        .add('hub_in', now - 4 * HOUR, hubs[2]);
      return { steps: story.steps, bookedAt: pickedUpAt - DAY };
    }
    case 22: {
      const plot = inTransit(story, now);
      story.add('hub_out', polledAt, hubs[2]);
      return plot;
    }
    case 23: {
      const pickedUpAt = now - 4 * DAY;
      story.booked(pickedUpAt - DAY).forwardLeg(pickedUpAt, now - 2 * DAY)
        .add('lost', now - 6 * HOUR, hubs[2], LOST_REMARK);
      return { steps: story.steps, bookedAt: pickedUpAt - DAY };
    }
    case 24: {
      const plot = inTransit(story, now);
      story.add('unmapped', now - 2 * HOUR, hubs[2]);
      return plot;
    }
    default:
      return inTransit(story, now);
  }
}

function serviceTypeOf(carrier: string, awb: string): SandboxShipment['serviceType'] {
  if (carrier === 'speedpost') return 'speed_post';
  if (carrier === 'indiapost') return awb.startsWith('E') ? 'speed_post' : 'surface';
  if (carrier === 'bluedart') return 'express';
  return fnv1aFmix32(`service:${awb}`) % 3 === 0 ? 'express' : 'surface';
}

/** `story` is the scenario whose story is told: the slow carrier (18) tells the in-transit one. */
function shipmentOf(
  carrier: string, awb: string, scenario: number, laneNumber: number, times: { anchor: number; now: number },
  story = scenario, revealed: readonly number[] | null = null,
): SandboxShipment {
  const lane = LANES[laneNumber % LANES.length]!;
  const plot = plotOf(story, lane, awb, times.anchor, times.now, revealed);
  return {
    carrier,
    awb,
    scenario,
    lane: laneNumber,
    origin: { ...lane.origin },
    destination: { ...lane.destination },
    bookedAt: wholeMinutes(plot.bookedAt),
    edd: wholeMinutes(plot.edd ?? plot.bookedAt + EDD_AFTER_BOOKING),
    weightGrams: 250 + (fnv1aFmix32(`weight:${awb}`) % 40) * 125,
    serviceType: serviceTypeOf(carrier, awb),
    steps: plot.steps,
    shuffled: plot.shuffled ?? false,
  };
}

/**
 * What carrier `carrier` answers for `awb` at `nowMs`, for a number first polled at `anchorMs`
 * (default: now, a first poll). Times are relative to the anchor floored to the whole minute: "80
 * hours ago" is 80 hours before the first poll, and a later poll shows the same scans at the same
 * times, as a real carrier does (scenario 22 adds its scan at the poll's own time; 25 and 26 reveal
 * a stage per poll; the network numbers 27-49 move on as time passes).
 */
export function answerFor(
  carrier: string, awb: string, nowMs: number, revealed: readonly number[] | null = null, anchorMs: number = nowMs,
): ScenarioAnswer {
  const number = keyOf(awb);
  const { scenario, lane } = scenarioOf(number);
  const now = Math.floor(nowMs / MINUTE) * MINUTE;
  // A clock that went back before the anchor (tests) tells the story as of now.
  const times = { anchor: Math.min(now, Math.floor(anchorMs / MINUTE) * MINUTE), now };
  // The numbers the scenarios leave free travel the simulated network (./network-numbers.ts).
  if (isNetworkNumber(number)) {
    const digits = number.replace(/\D/g, '');
    const lanePincodes = LANES[lane % LANES.length]!;
    return {
      kind: 'shipment',
      shipment: networkShipment(
        carrier, number, Number(digits.slice(-2)), lane, { origin: lanePincodes.origin.pincode, destination: lanePincodes.destination.pincode }, times,
      ),
    };
  }
  switch (scenario) {
    case 0: return { kind: 'not_found' };
    case 17: return { kind: 'down' };
    case 18: return { kind: 'slow', shipment: shipmentOf(carrier, number, scenario, lane, times, DEFAULT_SCENARIO), delayMs: SLOW_DELAY_MS };
    case 19: return { kind: 'malformed' };
    default: return { kind: 'shipment', shipment: shipmentOf(carrier, number, scenario, lane, times, scenario, revealed) };
  }
}
