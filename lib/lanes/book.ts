import type { NormalizedShipment } from '../normalize/index.ts';
import { DAY_MS } from '../time/index.ts';
import { laneClosureOf, type LaneClosure, type LaneOutcome } from './closure.ts';
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
 * (`laneEnds`: where each lane's run ends), flags without the counted bit; `ndrAt` names the
 * closures with failed-attempt reasons (`ndrReasons`, the same order).
 */
export interface LaneBookState {
  lanes: string[];
  laneEnds: Uint32Array;
  awbs: string[];
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
}

const OUTCOMES: readonly LaneOutcome[] = ['delivered', 'rto', 'cancelled'];
const OUTCOME_CODE: Readonly<Record<LaneOutcome, number>> = { delivered: 0, rto: 1, cancelled: 2 };
/** flags: outcome (bits 0-1), onTime (2-3: 0, 1, or 2 for null), firstAttempt (4-5, the same), counted (6). */
const COUNTED = 1 << 6;
const NO_REASONS: readonly string[] = Object.freeze([]);
const tri = (v: 0 | 1 | null) => (v === null ? 2 : v);
const untri = (v: number): 0 | 1 | null => (v === 2 ? null : (v as 0 | 1));

/** Above this many closures a lane indexes its AWBs in a Map; at or below, a scan of the list is as fast. */
const SCANNED_SLOTS = 8;

/** A closure's four numbers in its lane's `cols`: closedAtS, transit days (NaN: none), version, flags. */
const CLOSED_AT = 0;
const TRANSIT = 1;
const VERSION = 2;
const FLAGS = 3;
const STRIDE = 4;

/**
 * One lane's closures (what the statistics need and nothing else: four numbers per closure in one
 * array, plus its AWB in the lane's list, its transit time in the sorted blocks and the reasons of failed
 * attempts, held only for closures that had some), and the running aggregates of the closures
 * inside the window, so figures are read without a pass over the lane.
 *
 * Most lanes are small (a history of 285,000 shipments spread over 85,000 lanes): one plain array
 * and Maps made only when needed, not four typed arrays and two Maps per lane, which cost ~1.7 KB a
 * lane (166 MiB for those lanes) in their object headers and buffers.
 */
class Lane {
  /** The AWB of each slot, in slot order: the newest poll's closure of a shipment replaces older ones. */
  readonly awbs: string[] = [];
  /**
   * AWB → slot, made once the lane outgrows SCANNED_SLOTS. Most lanes hold a few closures (a history
   * of 285,000 shipments spread over 85,000 lanes), and a Map per lane costs ~200 bytes more than
   * the list it indexes (~17 MiB over those lanes).
   */
  private index: Map<string, number> | null = null;
  /** STRIDE numbers per slot (CLOSED_AT, TRANSIT, VERSION, FLAGS). */
  readonly cols: number[] = [];
  /** Failed-attempt reasons by slot, only for closures that had some (null until one has). */
  ndr: Map<number, readonly string[]> | null = null;
  // Aggregates of counted closures (inside the window): laneStatsOf's sums, kept up to date.
  closed = 0;
  delivered = 0;
  returned = 0;
  eddKnown = 0;
  onTime = 0;
  firstAttempt = 0;
  failed = 0;
  /** Counted failed attempts by reason (null until one is counted). */
  reasons: Map<string, number> | null = null;
  readonly sortedTransit = new SortedNumbers();
  /** A lower bound of the counted closures' closedAtS: the sweep has work only below it. */
  oldestCountedS = Infinity;
  lastSweptMs = -Infinity;
  /** The figures as last built, until the lane changes. */
  built: WindowedLaneStats | null = null;

  readonly key: string;
  constructor(key: string) {
    this.key = key;
  }

  get size(): number {
    return this.awbs.length;
  }

  /** The slot of `awb`'s closure, or undefined. */
  slotOf(awb: string): number | undefined {
    if (this.index) return this.index.get(awb);
    const at = this.awbs.indexOf(awb);
    return at < 0 ? undefined : at;
  }

  slotFor(awb: string): number {
    const known = this.slotOf(awb);
    if (known !== undefined) return known;
    const slot = this.awbs.length;
    this.cols.push(0, Number.NaN, 0, 0);
    this.awbs.push(awb);
    if (this.index) this.index.set(awb, slot);
    else if (this.awbs.length > SCANNED_SLOTS) this.index = new Map(this.awbs.map((a, i) => [a, i]));
    return slot;
  }

  closedAtS(slot: number): number {
    return this.cols[slot * STRIDE + CLOSED_AT]!;
  }

  flags(slot: number): number {
    return this.cols[slot * STRIDE + FLAGS]!;
  }

  version(slot: number): number {
    return this.cols[slot * STRIDE + VERSION]!;
  }

  reasonsOf(slot: number): readonly string[] {
    return this.ndr?.get(slot) ?? NO_REASONS;
  }

  /** Adds (sign 1) or takes away (-1) the closure in `slot` from the aggregates. */
  tally(slot: number, sign: 1 | -1): void {
    const flags = this.flags(slot);
    const outcome = flags & 3;
    this.closed += sign;
    if (outcome === 0) {
      this.delivered += sign;
      const transit = this.cols[slot * STRIDE + TRANSIT]!;
      if (!Number.isNaN(transit)) {
        if (sign === 1) this.sortedTransit.add(transit);
        else this.sortedTransit.remove(transit);
      }
      const onTime = untri((flags >> 2) & 3);
      if (onTime !== null) { this.eddKnown += sign; this.onTime += sign * onTime; }
      if (untri((flags >> 4) & 3) === 1) this.firstAttempt += sign;
    } else if (outcome === 1) this.returned += sign;
    for (const r of this.reasonsOf(slot)) {
      const reasons = (this.reasons ??= new Map());
      const left = (reasons.get(r) ?? 0) + sign;
      if (left === 0) reasons.delete(r);
      else reasons.set(r, left);
      this.failed += sign;
    }
    this.cols[slot * STRIDE + FLAGS] = sign === 1 ? flags | COUNTED : flags & ~COUNTED;
    this.built = null;
  }

  closureAt(awb: string, slot: number): LaneClosure {
    const flags = this.flags(slot);
    const transit = this.cols[slot * STRIDE + TRANSIT]!;
    const { carrier, mode } = laneParts(this.key);
    return {
      lane: this.key, carrier, awb, mode,
      outcome: OUTCOMES[flags & 3]!,
      closedAtS: this.closedAtS(slot),
      transitDays: Number.isNaN(transit) ? null : transit,
      onTime: untri((flags >> 2) & 3),
      firstAttempt: untri((flags >> 4) & 3),
      ndrReasons: [...this.reasonsOf(slot)],
      version: this.version(slot),
    };
  }

  stats(windowDays: number): WindowedLaneStats {
    if (this.built) return this.built;
    const n = this.sortedTransit.size;
    const at = (i: number) => this.sortedTransit.at(i);
    const rate = (part: number, whole: number) => (whole === 0 ? null : part / whole);
    this.built = {
      lane: this.key,
      ...laneParts(this.key),
      window_days: windowDays,
      closed: this.closed,
      sample_size: n,
      p50_transit_days: n ? p50Of(n, at) : null,
      p90_transit_days: n ? p90Of(n, at) : null,
      on_time_rate: rate(this.onTime, this.eddKnown),
      first_attempt_rate: rate(this.firstAttempt, this.delivered),
      rto_rate: rate(this.returned, this.delivered + this.returned),
      failed_attempts: this.failed,
      ndr_reasons: [...(this.reasons?.keys() ?? [])].sort().map((reason) => ({ reason, share: this.reasons!.get(reason)! / this.failed })),
    };
    return this.built;
  }
}

/**
 * In-process lane statistics for the embedded default: one closure per closed shipment, grouped by
 * lane, with the windowed figures of each lane (lib/lanes/window.ts, the same as ClickHouse's
 * lane_stats) maintained as closures arrive: adding one costs a binary search and a move within one
 * block of sorted transit times, and a read builds the figures from the aggregates (once per
 * change), so no lookup ever passes over a lane's closures. The window slides in the background
 * (`sweep`, at most once per `ttlMs` per lane, only for lanes with closures that left it); until
 * then a closure that has just left the window is still counted. The lookup's benchmark
 * (decisions.md "Lane benchmark") is the window's p50 and sample size.
 */
export class LaneBook implements LaneStatsSource, LaneWindowSource {
  private readonly lanes = new Map<string, Lane>();
  readonly windowDays: number;
  private readonly clock: () => number;
  private readonly ttlMs: number;
  /** Passes over all of a lane's closures so far (the sweep's; a test counts them). */
  fullPasses = 0;

  constructor(options: LaneBookOptions = {}) {
    this.windowDays = options.windowDays ?? DEFAULT_WINDOW_DAYS;
    this.clock = options.clock ?? Date.now;
    this.ttlMs = options.ttlMs ?? 60_000;
  }

  private windowStartS(nowMs: number): number {
    return windowStartS(Math.floor(nowMs / 1000), this.windowDays);
  }

  /** Records a closure; the newest poll's closure of a shipment replaces older ones (re-polls change nothing). */
  add(closure: LaneClosure): void {
    let lane = this.lanes.get(closure.lane);
    if (!lane) this.lanes.set(closure.lane, (lane = new Lane(closure.lane)));
    const known = lane.slotOf(closure.awb);
    if (known !== undefined) {
      if (lane.version(known) > closure.version) return;
      if (lane.flags(known) & COUNTED) lane.tally(known, -1);
    }
    const slot = known ?? lane.slotFor(closure.awb);
    const at = slot * STRIDE;
    lane.cols[at + CLOSED_AT] = closure.closedAtS;
    lane.cols[at + TRANSIT] = closure.transitDays ?? Number.NaN;
    lane.cols[at + VERSION] = closure.version;
    lane.cols[at + FLAGS] = OUTCOME_CODE[closure.outcome] | (tri(closure.onTime) << 2) | (tri(closure.firstAttempt) << 4);
    if (closure.ndrReasons.length > 0) (lane.ndr ??= new Map()).set(slot, closure.ndrReasons.slice());
    else lane.ndr?.delete(slot);
    // A closure already outside the window is kept (closures() and a later book) but not counted.
    if (closure.closedAtS >= this.windowStartS(this.clock())) {
      lane.tally(slot, 1);
      if (closure.closedAtS < lane.oldestCountedS) lane.oldestCountedS = closure.closedAtS;
    }
  }

  /**
   * Slides the window: every lane with a counted closure now outside it, not swept in the last
   * `ttlMs`, is passed over once and those closures stop counting. Returns the lanes passed over.
   */
  sweep(nowMs = this.clock()): number {
    const startS = this.windowStartS(nowMs);
    let swept = 0;
    for (const lane of this.lanes.values()) {
      if (lane.oldestCountedS >= startS || nowMs - lane.lastSweptMs < this.ttlMs) continue;
      lane.lastSweptMs = nowMs;
      this.fullPasses++;
      swept++;
      let oldest = Infinity;
      for (let slot = 0; slot < lane.size; slot++) {
        if (!(lane.flags(slot) & COUNTED)) continue;
        const closedAtS = lane.closedAtS(slot);
        if (closedAtS < startS) lane.tally(slot, -1);
        else if (closedAtS < oldest) oldest = closedAtS;
      }
      lane.oldestCountedS = oldest;
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

  /** The lane's windowed statistics now, null when it has no closure at all. */
  statsOf(lane: string): WindowedLaneStats | null {
    return this.lanes.get(lane)?.stats(this.windowDays) ?? null;
  }

  async get(lane: string): Promise<LaneStats | null> {
    const stats = this.statsOf(lane);
    if (!stats || stats.p50_transit_days === null) return null;
    return { median_transit_days: stats.p50_transit_days, sample_size: stats.sample_size };
  }

  async lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]> {
    const suffix = `:${originPrefix}:${destinationPrefix}`;
    const out: WindowedLaneStats[] = [];
    for (const lane of this.lanes.keys()) {
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
    let total = 0;
    for (const lane of this.lanes.values()) total += lane.size;
    const state: LaneBookState = {
      lanes: [], laneEnds: new Uint32Array(this.lanes.size), awbs: new Array<string>(total),
      closedAtS: new Uint32Array(total), transit: new Float64Array(total), version: new Float64Array(total), flags: new Uint8Array(total),
      ndrAt: [], ndrReasons: [],
    };
    let at = 0;
    for (const lane of this.lanes.values()) {
      const n = lane.size;
      for (let slot = 0; slot < n; slot++) {
        state.awbs[at + slot] = lane.awbs[slot]!;
        const from = slot * STRIDE;
        state.closedAtS[at + slot] = lane.cols[from + CLOSED_AT]!;
        state.transit[at + slot] = lane.cols[from + TRANSIT]!;
        state.version[at + slot] = lane.cols[from + VERSION]!;
        state.flags[at + slot] = lane.cols[from + FLAGS]! & ~COUNTED;
      }
      for (const [slot, reasons] of lane.ndr ?? []) { state.ndrAt.push(at + slot); state.ndrReasons.push([...reasons]); }
      at += n;
      state.laneEnds[state.lanes.length] = at;
      state.lanes.push(lane.key);
    }
    return state;
  }

  /** Takes back an exported state into this (empty) book, counting the closures inside the window now. */
  importState(state: LaneBookState): void {
    if (this.lanes.size > 0) throw new Error('lane book state: import into an empty book only');
    const total = state.awbs.length;
    if (state.closedAtS.length !== total || state.transit.length !== total || state.version.length !== total || state.flags.length !== total
      || state.laneEnds.length !== state.lanes.length || (state.lanes.length > 0 && state.laneEnds[state.lanes.length - 1] !== total)) {
      throw new Error('lane book state: columns differ in length');
    }
    const reasonsAt = new Map<number, readonly string[]>();
    state.ndrAt.forEach((at, i) => reasonsAt.set(at, state.ndrReasons[i]!));
    const startS = this.windowStartS(this.clock());
    let from = 0;
    state.lanes.forEach((key, l) => {
      const to = state.laneEnds[l]!;
      const lane = new Lane(key);
      const n = to - from;
      for (let slot = 0; slot < n; slot++) {
        const i = from + slot;
        if (lane.slotFor(state.awbs[i]!) !== slot) throw new Error(`lane book state: AWB ${state.awbs[i]} twice in lane ${key}`);
        const at = slot * STRIDE;
        lane.cols[at + CLOSED_AT] = state.closedAtS[i]!;
        lane.cols[at + TRANSIT] = state.transit[i]!;
        lane.cols[at + VERSION] = state.version[i]!;
        lane.cols[at + FLAGS] = state.flags[i]!;
        const reasons = reasonsAt.get(i);
        if (reasons) (lane.ndr ??= new Map()).set(slot, reasons);
        const closedAtS = state.closedAtS[i]!;
        if (closedAtS >= startS) {
          lane.tally(slot, 1);
          if (closedAtS < lane.oldestCountedS) lane.oldestCountedS = closedAtS;
        }
      }
      this.lanes.set(key, lane);
      from = to;
    });
  }

  /** Every closure held (inside the window or not), rebuilt from the columns. */
  closures(): LaneClosure[] {
    const out: LaneClosure[] = [];
    for (const lane of this.lanes.values()) lane.awbs.forEach((awb, slot) => out.push(lane.closureAt(awb, slot)));
    return out;
  }
}
