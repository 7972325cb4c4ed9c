import type { NormalizedShipment } from '../normalize/index.ts';
import { DAY_MS } from '../time/index.ts';
import { laneClosureOf, type LaneClosure, type LaneOutcome } from './closure.ts';
import { withRoom } from '../compact/columns.ts';
import { ownString } from '../compact/own-string.ts';
import { ShipmentNumbers } from '../compact/shipment-numbers.ts';
import { ReasonCounts } from './reason-counts.ts';
import { SortedNumbers } from './sorted.ts';
import type { LaneStats, LaneStatsSource } from './types.ts';
import { DEFAULT_WINDOW_DAYS, laneParts, p50Of, p90Of, windowStartS, type WindowedLaneStats } from './window.ts';
import type { KeyMode } from '../schemas/index.ts';

/** Windowed statistics of every carrier of one origin/destination prefix pair (the lanes API). */
export interface LaneWindowSource {
  /** One entry per carrier with a closure in the window, any order. */
  lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]>;
  readonly windowDays: number;
  /**
   * Sources that answer from a copy (ClickHouse's snapshot of lane_stats): when the copy was read
   * and when it is read next, so an empty answer right after closures can be explained. Absent:
   * the figures are computed at the request (the embedded book).
   */
  freshness?(): LaneFreshness;
}

export interface LaneFreshness {
  /** When the figures answered were read from the store (epoch ms), null before the first read. */
  readAtMs: number | null;
  /** When a request will next start a read (epoch ms). */
  nextReadAtMs: number;
}

/** The closure of a normalized shipment polled at `polledMs` for a key of `mode`, null unless closed on a lane. */
export function closureOfShipment(shipment: NormalizedShipment, mode: KeyMode, polledMs: number): LaneClosure | null {
  const { record, facts } = shipment;
  const delivered = facts.stage === 'delivered' && facts.first_physical_scan_ms !== null && facts.terminal_at_ms !== null;
  return laneClosureOf({
    carrier: record.carrier,
    awb: record.awb,
    mode,
    lane: facts.lane,
    stage: facts.stage,
    eddMs: record.estimated_delivery_at === null ? null : Date.parse(record.estimated_delivery_at),
    attempts: record.delivery_attempts.count,
    // The same expression as the shipments row's transit_days (lib/clickhouse/rows.ts).
    transitDays: delivered ? (facts.terminal_at_ms! - facts.first_physical_scan_ms!) / DAY_MS : null,
    events: record.events.map((e) => ({
      event_id: e.event_id, occurredMs: Date.parse(e.timestamp), code: e.code, status: e.status, reason_code: e.reason_code,
    })),
    version: polledMs,
  });
}

/**
 * A book's closures as a checkpoint keeps them: lanes in order, each lane's closures in slot order
 * (`laneEnds`: where each lane's run ends), each closure's shipment by its number in the book's
 * numbering (which the checkpoint keeps with the shipment index), flags without the counted bit;
 * `ndrAt` names the closures with failed-attempt reasons (`ndrReasons`, the same order).
 */
export interface LaneBookState {
  lanes: string[];
  laneEnds: Uint32Array;
  shipments: Uint32Array;
  closedAtS: Uint32Array;
  transit: Float64Array;
  version: Float64Array;
  flags: Uint8Array;
  ndrAt: number[];
  ndrReasons: string[][];
}

export interface LaneBookOptions {
  windowDays?: number;
  clock?: () => number;
  /**
   * How often the background slides the window (`startSweeping`): a lane whose oldest counted
   * closure has left the window is passed over at most once per this interval. Default 60 s (a
   * window of days slides slowly). 0: only when `sweep` is called.
   */
  ttlMs?: number;
  /** The shipments' numbering, shared with the embedded pipeline's shipment index; default: the book's own. */
  shipments?: ShipmentNumbers;
}

const OUTCOMES: readonly LaneOutcome[] = ['delivered', 'rto', 'cancelled'];
const OUTCOME_CODE: Readonly<Record<LaneOutcome, number>> = { delivered: 0, rto: 1, cancelled: 2 };
/** flags: outcome (bits 0-1), onTime (2-3: 0, 1, or 2 for null), firstAttempt (4-5, the same), counted (6). */
const COUNTED = 1 << 6;
const NO_REASONS: readonly string[] = Object.freeze([]);
const tri = (v: 0 | 1 | null) => (v === null ? 2 : v);
const untri = (v: number): 0 | 1 | null => (v === 2 ? null : (v as 0 | 1));

/** A lane's running aggregates of its counted closures (inside the window), AGG numbers per lane. */
const CLOSED = 0;
const DELIVERED = 1;
const RETURNED = 2;
const EDD_KNOWN = 3;
const ON_TIME = 4;
const FIRST_ATTEMPT = 5;
const FAILED = 6;
const AGG = 7;

/**
 * Above this many closures a lane keeps its counted transit times sorted (SortedNumbers) and its
 * figures built; at or below, a read sorts its few times (most lanes: a history of 285,000
 * shipments spread over 85,000 lanes), which costs less than a structure per lane.
 */
const SORTED_FROM = 32;

/** Adds `by` to one aggregate. */
function bump(agg: Int32Array, at: number, by: number): void {
  agg[at] = agg[at]! + by;
}

/**
 * In-process lane statistics for the embedded default: one closure per closed shipment, grouped by
 * lane, with the windowed figures of each lane (lib/lanes/window.ts, the same as ClickHouse's
 * lane_stats) maintained as closures arrive. A lane of more than SORTED_FROM closures keeps its
 * transit times sorted in blocks (adding one costs a binary search and a move within one block) and
 * its figures built once per change, so no lookup ever passes over a large lane's closures; a
 * smaller lane's read sorts its few times. The window slides in the background (`sweep`, at most
 * once per `ttlMs` per lane, only for lanes with closures that left it); until then a closure that
 * has just left the window is still counted. The lookup's benchmark (decisions.md "Lane
 * benchmark") is the window's p50 and sample size.
 *
 * Held in columns for the whole book, not in an object per lane: a lane is a number (its key's
 * index), its aggregates a run of AGG numbers; a closure is a slot in typed arrays, chained to the
 * next slot of its lane and to the next slot of the same shipment (by its number, ShipmentNumbers).
 * An object per lane, with its own arrays, sorted blocks and Maps, cost ~1.2 KB a lane: 13 MiB for
 * the seeded history's 10,564 lanes, ~110 MiB at a million polls (heap snapshots of a restart).
 */
export class LaneBook implements LaneStatsSource, LaneWindowSource {
  readonly windowDays: number;
  private readonly clock: () => number;
  private readonly ttlMs: number;
  /** Passes over all of a lane's closures so far (the sweep's; a test counts them). */
  fullPasses = 0;

  // Lanes: key → index, and per index its aggregates, sweep marks and slot chain (slot + 1; 0: none).
  private readonly laneIds = new Map<string, number>();
  private readonly laneKeys: string[] = [];
  private agg = new Int32Array(0);
  /** A lower bound of the counted closures' closedAtS: the sweep has work only below it. */
  private oldestCountedS = new Float64Array(0);
  private lastSweptMs = new Float64Array(0);
  private laneHead = new Uint32Array(0);
  private laneTail = new Uint32Array(0);
  private laneSize = new Uint32Array(0);
  /** Counted failed attempts by reason, for lanes that have some. */
  private readonly reasons = new ReasonCounts();
  /** Lanes past SORTED_FROM closures: their counted transit times, sorted, and their figures as last built. */
  private readonly sorted = new Map<number, SortedNumbers>();
  private readonly built = new Map<number, WindowedLaneStats>();

  // Closures: one slot each, the newest poll's closure of a shipment replacing older ones in place.
  private slots = 0;
  readonly shipments: ShipmentNumbers;
  private shipmentOf = new Uint32Array(0);
  private closedAt = new Uint32Array(0);
  /** Transit days, NaN: none. */
  private transit = new Float64Array(0);
  private version = new Float64Array(0);
  private flags = new Uint8Array(0);
  private laneOf = new Uint32Array(0);
  private nextInLane = new Uint32Array(0);
  private nextSameShipment = new Uint32Array(0);
  /** By shipment number: its first slot (+ 1; 0: none); the same shipment on other lanes follows in nextSameShipment. */
  private firstSlot = new Uint32Array(0);
  /**
   * Each slot's failed-attempt reasons as a reference into `reasonLists` (0: none). Closures share a
   * few lists (a reason or two out of a dozen codes): a list per closure that had some, in a Map by
   * slot, cost ~7.6 MiB at a million polls.
   */
  private ndrRef = new Uint32Array(0);
  private readonly reasonLists: (readonly string[])[] = [NO_REASONS];
  private readonly reasonListRef = new Map<string, number>();

  constructor(options: LaneBookOptions = {}) {
    this.windowDays = options.windowDays ?? DEFAULT_WINDOW_DAYS;
    this.clock = options.clock ?? Date.now;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.shipments = options.shipments ?? new ShipmentNumbers();
  }

  private windowStartS(nowMs: number): number {
    return windowStartS(Math.floor(nowMs / 1000), this.windowDays);
  }

  /** The lane of `key`, a new one when first seen; `flat`: the key is a string of its own already (a checkpoint's). */
  private laneFor(key: string, flat = false): number {
    const known = this.laneIds.get(key);
    if (known !== undefined) return known;
    const lane = this.laneKeys.length;
    this.growLanes(lane + 1);
    this.oldestCountedS[lane] = Infinity;
    this.lastSweptMs[lane] = -Infinity;
    const own = flat ? key : ownString(key);
    this.laneKeys.push(own);
    this.laneIds.set(own, lane);
    return lane;
  }

  /** Room in every lane column for `lanes` lanes. */
  private growLanes(lanes: number): void {
    this.agg = withRoom(this.agg, lanes * AGG);
    this.oldestCountedS = withRoom(this.oldestCountedS, lanes);
    this.lastSweptMs = withRoom(this.lastSweptMs, lanes);
    this.laneHead = withRoom(this.laneHead, lanes);
    this.laneTail = withRoom(this.laneTail, lanes);
    this.laneSize = withRoom(this.laneSize, lanes);
  }

  /** Room in every closure column for `slots` slots. */
  private growSlots(slots: number): void {
    this.closedAt = withRoom(this.closedAt, slots);
    this.transit = withRoom(this.transit, slots);
    this.version = withRoom(this.version, slots);
    this.flags = withRoom(this.flags, slots);
    this.laneOf = withRoom(this.laneOf, slots);
    this.nextInLane = withRoom(this.nextInLane, slots);
    this.shipmentOf = withRoom(this.shipmentOf, slots);
    this.nextSameShipment = withRoom(this.nextSameShipment, slots);
    this.ndrRef = withRoom(this.ndrRef, slots);
  }

  /** The slot of the shipment's closure on `lane`, or undefined. */
  private slotOf(lane: number, shipment: number): number | undefined {
    for (let s = this.firstSlot[shipment] ?? 0; s !== 0; s = this.nextSameShipment[s - 1]!) {
      if (this.laneOf[s - 1] === lane) return s - 1;
    }
    return undefined;
  }

  /** A new slot at the end of `lane`'s chain, not counted. */
  private newSlot(lane: number, shipment: number): number {
    const slot = this.slots++;
    this.growSlots(slot + 1);
    this.flags[slot] = 0;
    this.ndrRef[slot] = 0;
    this.laneOf[slot] = lane;
    this.nextInLane[slot] = 0;
    this.shipmentOf[slot] = shipment;
    this.firstSlot = withRoom(this.firstSlot, shipment + 1);
    this.nextSameShipment[slot] = this.firstSlot[shipment]!;
    this.firstSlot[shipment] = slot + 1;
    if (this.laneTail[lane] === 0) this.laneHead[lane] = slot + 1;
    else this.nextInLane[this.laneTail[lane]! - 1] = slot + 1;
    this.laneTail[lane] = slot + 1;
    if (++this.laneSize[lane]! === SORTED_FROM + 1) this.sortLane(lane);
    return slot;
  }

  /** The reference of a list of reasons (one shared, frozen copy per distinct list; 0 for none). */
  private reasonListOf(reasons: readonly string[]): number {
    if (reasons.length === 0) return 0;
    const key = reasons.join('\n');
    let ref = this.reasonListRef.get(key);
    if (ref === undefined) {
      ref = this.reasonLists.length;
      this.reasonLists.push(Object.freeze(reasons.map(ownString)));
      this.reasonListRef.set(key, ref);
    }
    return ref;
  }

  /** The lane's counted, delivered transit times, in slot order. */
  private countedTransit(lane: number): number[] {
    const out: number[] = [];
    for (let s = this.laneHead[lane]!; s !== 0; s = this.nextInLane[s - 1]!) {
      const slot = s - 1;
      const flags = this.flags[slot]!;
      if (flags & COUNTED && (flags & 3) === 0 && !Number.isNaN(this.transit[slot]!)) out.push(this.transit[slot]!);
    }
    return out;
  }

  /** The lane has just outgrown SORTED_FROM: from now on its transit times are kept sorted. */
  private sortLane(lane: number): void {
    const sorted = new SortedNumbers();
    for (const t of this.countedTransit(lane)) sorted.add(t);
    this.sorted.set(lane, sorted);
  }

  /** Adds (sign 1) or takes away (-1) the closure in `slot` from its lane's aggregates. */
  private tally(slot: number, sign: 1 | -1): void {
    const lane = this.laneOf[slot]!;
    const flags = this.flags[slot]!;
    const at = lane * AGG;
    const agg = this.agg;
    const outcome = flags & 3;
    bump(agg, at + CLOSED, sign);
    if (outcome === 0) {
      bump(agg, at + DELIVERED, sign);
      const transit = this.transit[slot]!;
      const sorted = this.sorted.get(lane);
      if (sorted && !Number.isNaN(transit)) {
        if (sign === 1) sorted.add(transit);
        else sorted.remove(transit);
      }
      const onTime = untri((flags >> 2) & 3);
      if (onTime !== null) { bump(agg, at + EDD_KNOWN, sign); bump(agg, at + ON_TIME, sign * onTime); }
      if (untri((flags >> 4) & 3) === 1) bump(agg, at + FIRST_ATTEMPT, sign);
    } else if (outcome === 1) bump(agg, at + RETURNED, sign);
    for (const r of this.reasonLists[this.ndrRef[slot]!]!) {
      this.reasons.add(lane, r, sign);
      bump(agg, at + FAILED, sign);
    }
    this.flags[slot] = sign === 1 ? flags | COUNTED : flags & ~COUNTED;
    this.built.delete(lane);
  }

  /** Counts the closure in `slot` when it lies inside the window starting at `startS`. */
  private countIfInside(slot: number, startS: number): void {
    const closedAtS = this.closedAt[slot]!;
    // A closure already outside the window is kept (closures() and a later book) but not counted.
    if (closedAtS < startS) return;
    this.tally(slot, 1);
    const lane = this.laneOf[slot]!;
    if (closedAtS < this.oldestCountedS[lane]!) this.oldestCountedS[lane] = closedAtS;
  }

  /**
   * Records a closure; the newest poll's closure of a shipment replaces older ones (re-polls change
   * nothing). `shipment`: its number, when the caller (the shipment index) has it already.
   */
  add(closure: LaneClosure, shipment = this.shipments.numberOf(closure.mode, closure.carrier, closure.awb)): void {
    const lane = this.laneFor(closure.lane);
    const known = this.slotOf(lane, shipment);
    if (known !== undefined) {
      if (this.version[known]! > closure.version) return;
      if (this.flags[known]! & COUNTED) this.tally(known, -1);
    }
    const slot = known ?? this.newSlot(lane, shipment);
    this.closedAt[slot] = closure.closedAtS;
    this.transit[slot] = closure.transitDays ?? Number.NaN;
    this.version[slot] = closure.version;
    this.flags[slot] = OUTCOME_CODE[closure.outcome] | (tri(closure.onTime) << 2) | (tri(closure.firstAttempt) << 4);
    this.ndrRef[slot] = this.reasonListOf(closure.ndrReasons);
    this.countIfInside(slot, this.windowStartS(this.clock()));
  }

  /**
   * Slides the window: every lane with a counted closure now outside it, not swept in the last
   * `ttlMs`, is passed over once and those closures stop counting. Returns the lanes passed over.
   */
  sweep(nowMs = this.clock()): number {
    const startS = this.windowStartS(nowMs);
    let swept = 0;
    for (let lane = 0; lane < this.laneKeys.length; lane++) {
      if (this.oldestCountedS[lane]! >= startS || nowMs - this.lastSweptMs[lane]! < this.ttlMs) continue;
      this.lastSweptMs[lane] = nowMs;
      this.fullPasses++;
      swept++;
      let oldest = Infinity;
      for (let s = this.laneHead[lane]!; s !== 0; s = this.nextInLane[s - 1]!) {
        const slot = s - 1;
        if (!(this.flags[slot]! & COUNTED)) continue;
        const closedAtS = this.closedAt[slot]!;
        if (closedAtS < startS) this.tally(slot, -1);
        else if (closedAtS < oldest) oldest = closedAtS;
      }
      this.oldestCountedS[lane] = oldest;
    }
    return swept;
  }

  /** Sweeps every `ttlMs` in the background (never in a request) until the returned stop is called. */
  startSweeping(): () => void {
    if (this.ttlMs <= 0) return () => undefined;
    const timer = setInterval(() => this.sweep(), this.ttlMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** The figures of `lane` from its aggregates and its sorted (or just sorted) transit times. */
  private build(lane: number): WindowedLaneStats {
    const key = this.laneKeys[lane]!;
    const at = lane * AGG;
    const agg = this.agg;
    const sorted = this.sorted.get(lane);
    let n: number;
    let valueAt: (i: number) => number;
    if (sorted) {
      n = sorted.size;
      valueAt = (i) => sorted.at(i);
    } else {
      const times = this.countedTransit(lane).sort((a, b) => a - b);
      n = times.length;
      valueAt = (i) => times[i]!;
    }
    const rate = (part: number, whole: number) => (whole === 0 ? null : part / whole);
    const reasons = this.reasons.of(lane);
    const failed = agg[at + FAILED]!;
    return {
      lane: key,
      ...laneParts(key),
      window_days: this.windowDays,
      closed: agg[at + CLOSED]!,
      sample_size: n,
      p50_transit_days: n ? p50Of(n, valueAt) : null,
      p90_transit_days: n ? p90Of(n, valueAt) : null,
      on_time_rate: rate(agg[at + ON_TIME]!, agg[at + EDD_KNOWN]!),
      first_attempt_rate: rate(agg[at + FIRST_ATTEMPT]!, agg[at + DELIVERED]!),
      rto_rate: rate(agg[at + RETURNED]!, agg[at + DELIVERED]! + agg[at + RETURNED]!),
      failed_attempts: failed,
      ndr_reasons: reasons.map(([reason, count]) => ({ reason, share: count / failed })),
    };
  }

  /** The lane's windowed statistics now, null when it has no closure at all. */
  statsOf(key: string): WindowedLaneStats | null {
    const lane = this.laneIds.get(key);
    if (lane === undefined) return null;
    if (!this.sorted.has(lane)) return this.build(lane);
    let stats = this.built.get(lane);
    if (!stats) this.built.set(lane, (stats = this.build(lane)));
    return stats;
  }

  async get(lane: string): Promise<LaneStats | null> {
    const stats = this.statsOf(lane);
    if (!stats || stats.p50_transit_days === null) return null;
    return { median_transit_days: stats.p50_transit_days, sample_size: stats.sample_size };
  }

  async lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]> {
    const suffix = `:${originPrefix}:${destinationPrefix}`;
    const out: WindowedLaneStats[] = [];
    for (const lane of this.laneKeys) {
      if (!lane.endsWith(suffix) || lane.startsWith('test:') !== (mode === 'test')) continue;
      const stats = this.statsOf(lane);
      if (stats && stats.closed > 0) out.push(stats);
    }
    return out;
  }

  /**
   * The closures in columns, lane after lane (a checkpoint keeps them: lib/pipeline/checkpoint.ts).
   * Only what a closure is; the aggregates are counted again at import against the window then.
   */
  exportState(): LaneBookState {
    const total = this.slots;
    const state: LaneBookState = {
      lanes: [...this.laneKeys], laneEnds: new Uint32Array(this.laneKeys.length), shipments: new Uint32Array(total),
      closedAtS: new Uint32Array(total), transit: new Float64Array(total), version: new Float64Array(total), flags: new Uint8Array(total),
      ndrAt: [], ndrReasons: [],
    };
    let at = 0;
    for (let lane = 0; lane < this.laneKeys.length; lane++) {
      for (let s = this.laneHead[lane]!; s !== 0; s = this.nextInLane[s - 1]!, at++) {
        const slot = s - 1;
        state.shipments[at] = this.shipmentOf[slot]!;
        state.closedAtS[at] = this.closedAt[slot]!;
        state.transit[at] = this.transit[slot]!;
        state.version[at] = this.version[slot]!;
        state.flags[at] = this.flags[slot]! & ~COUNTED;
        const ref = this.ndrRef[slot]!;
        if (ref !== 0) { state.ndrAt.push(at); state.ndrReasons.push([...this.reasonLists[ref]!]); }
      }
      state.laneEnds[lane] = at;
    }
    return state;
  }

  /**
   * Takes back an exported state into this (empty) book, counting the closures inside the window
   * now. Its shipment numbers are those of the book's numbering, restored first (the shipment index's).
   */
  importState(state: LaneBookState): void {
    if (this.laneKeys.length > 0) throw new Error('lane book state: import into an empty book only');
    const total = state.shipments.length;
    if (state.closedAtS.length !== total || state.transit.length !== total || state.version.length !== total || state.flags.length !== total
      || state.laneEnds.length !== state.lanes.length || (state.lanes.length > 0 && state.laneEnds[state.lanes.length - 1] !== total)) {
      throw new Error('lane book state: columns differ in length');
    }
    // The columns at their final size at once (no doubling slack), the closures in the state's
    // order (lane after lane) as slots 0…total-1, their columns copied whole: a slot at a time
    // through newSlot was most of a million-poll restart's checkpoint load.
    this.growSlots(total);
    this.growLanes(state.lanes.length);
    this.firstSlot = withRoom(this.firstSlot, this.shipments.size);
    this.shipmentOf.set(state.shipments);
    this.closedAt.set(state.closedAtS);
    this.transit.set(state.transit);
    this.version.set(state.version);
    this.flags.set(state.flags);
    state.ndrAt.forEach((at, i) => { this.ndrRef[at] = this.reasonListOf(state.ndrReasons[i]!); });
    this.slots = total;
    let from = 0;
    state.lanes.forEach((key, l) => {
      const to = state.laneEnds[l]!;
      const lane = this.laneFor(key, true);
      if (this.laneSize[lane] !== 0) throw new Error(`lane book state: lane ${key} twice`);
      if (to > from) {
        this.laneHead[lane] = from + 1;
        this.laneTail[lane] = to;
        this.laneSize[lane] = to - from;
      }
      for (let slot = from; slot < to; slot++) {
        const shipment = state.shipments[slot]!;
        if (shipment >= this.shipments.size) throw new Error(`lane book state: shipment ${shipment} is not numbered (${this.shipments.size} are)`);
        if (this.slotOf(lane, shipment) !== undefined) throw new Error(`lane book state: ${this.shipments.key(shipment)} twice in lane ${key}`);
        this.laneOf[slot] = lane;
        this.nextInLane[slot] = slot + 1 < to ? slot + 2 : 0;
        this.nextSameShipment[slot] = this.firstSlot[shipment]!;
        this.firstSlot[shipment] = slot + 1;
      }
      from = to;
    });
    const startS = this.windowStartS(this.clock());
    for (let slot = 0; slot < total; slot++) this.countIfInside(slot, startS);
    // Lanes past SORTED_FROM keep their counted transit times sorted, as newSlot would have made them.
    for (let lane = 0; lane < this.laneKeys.length; lane++) if (this.laneSize[lane]! > SORTED_FROM) this.sortLane(lane);
  }

  /** Every closure held (inside the window or not), rebuilt from the columns. */
  closures(): LaneClosure[] {
    const out: LaneClosure[] = [];
    for (let lane = 0; lane < this.laneKeys.length; lane++) {
      for (let s = this.laneHead[lane]!; s !== 0; s = this.nextInLane[s - 1]!) out.push(this.closureAt(s - 1));
    }
    return out;
  }

  private closureAt(slot: number): LaneClosure {
    const flags = this.flags[slot]!;
    const transit = this.transit[slot]!;
    const key = this.laneKeys[this.laneOf[slot]!]!;
    const { carrier, mode } = laneParts(key);
    return {
      lane: key, carrier, awb: this.shipments.awb(this.shipmentOf[slot]!), mode,
      outcome: OUTCOMES[flags & 3]!,
      closedAtS: this.closedAt[slot]!,
      transitDays: Number.isNaN(transit) ? null : transit,
      onTime: untri((flags >> 2) & 3),
      firstAttempt: untri((flags >> 4) & 3),
      ndrReasons: [...this.reasonLists[this.ndrRef[slot]!]!],
      version: this.version[slot]!,
    };
  }
}
