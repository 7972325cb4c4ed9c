/**
 * The background work of analyses. Any process serving the API runs one; an analysis waiting to run
 * is on the state store's global schedule, and a runner takes it with a lease (the store's claim
 * step moves its due time to the lease's end atomically), so one process at a time works on it.
 *
 * Leases are short and kept alive by a heartbeat (every quarter lease, whatever the chunk is doing):
 * a process that dies — SIGKILL, power — leaves its analyses to the next runner to look (itself
 * restarted, or any other instance) within one lease (default 6 s), with no instance identity to
 * agree on. One instance stalled past its lease may see another take over: harmless, since results
 * are stored chunk by chunk, a chunk stored before counts once, and completion happens once.
 * Results are stored with the progress they make, so a restart resumes at the first chunk without
 * results and ends with the same report; shipments were counted when the analysis was accepted, so
 * nothing is counted twice.
 *
 * The key's standing is asked before every chunk (lib/access standing.ts, as push's workers ask
 * it): a revoked (or deleted) key's analysis stops, `failed` with the reason; a suspended or expired
 * one is held — off the work, its reason shown — and looked at again every HOLD_RECHECK_MS, so it
 * resumes once the key is resumed or renewed.
 *
 * Carrier errors are retried before they count (RETRY_DELAYS_MS): once every chunk has results,
 * the errors are looked up again after each delay of the schedule — the first one longer than a
 * carrier's breaker rests (lib/carriers/http.ts, 10 s), so it has closed — one at a time per
 * carrier, those retried least and never really asked first; an answer from an open breaker ends
 * that carrier's round. What is still an error after the last round counts as one (and is given
 * back): at most 1 + rounds asks of a shipment, within the schedule's sum of time plus the asks.
 */
import type { StandingOf } from '../access/standing.ts';
import { isGone } from '../access/standing.ts';
import type { WindowedLaneStats } from '../lanes/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import type { AnalyzerLookup } from './lookup.ts';
import { buildReport } from './report.ts';
import { analyzerKeys, dueMemberOf, parseDueMember, type AnalysisDoc, type AnalysisStore } from './store.ts';
import type { AnalyzedShipment, NetworkLaneFigures, ShipmentInput } from './types.ts';

export interface NetworkSource {
  lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]>;
  readonly windowDays: number;
}

/** Waits before each retry round of carrier errors: 5 rounds within 4 minutes, the first past a breaker's rest. */
export const RETRY_DELAYS_MS: readonly number[] = [15_000, 30_000, 60_000, 60_000, 60_000];
/** How long a claim holds an analysis without a heartbeat. */
export const LEASE_MS = 6_000;
/** How often a held analysis (suspended or expired key) is looked at again. */
export const HOLD_RECHECK_MS = 30_000;
/** How long an analysis reserved on the schedule before it is stored waits for its store step. */
export const RESERVE_GRACE_MS = 5_000;

export interface RunnerOptions {
  store: AnalysisStore;
  lookup: AnalyzerLookup;
  network: NetworkSource;
  /** After an analysis completes (its event, its ClickHouse rows). Must be safe to repeat. */
  onCompleted: (doc: AnalysisDoc, shipments: readonly AnalyzedShipment[]) => Promise<void>;
  clock: () => number;
  /** The key's standing now (lib/access standingFromStore); absent: every key is active. */
  standing?: StandingOf;
  /** How long a claim holds an analysis without a heartbeat; default LEASE_MS. */
  leaseMs?: number;
  /** Analyses one process runs at once; default 2. */
  concurrency?: number;
  /** How often an idle runner looks for work (work accepted in this process wakes it at once). */
  idleMs?: number;
  /** Real-time waits before each retry round of carrier errors; default RETRY_DELAYS_MS. */
  retryDelaysMs?: readonly number[];
  /** How often a held analysis is looked at again; default HOLD_RECHECK_MS. */
  holdRecheckMs?: number;
  log?: (level: 'error' | 'info', message: string, err?: unknown) => void;
}

/** Network figures of the shipments' lanes: every carrier of each origin → destination pair they use. */
export async function networkFor(network: NetworkSource, shipments: readonly AnalyzedShipment[], mode: KeyMode): Promise<Map<string, NetworkLaneFigures>> {
  const pairs = new Set<string>();
  for (const s of shipments) if (s.lane !== null) pairs.add(s.lane.slice(s.lane.indexOf(':') + 1));
  const out = new Map<string, NetworkLaneFigures>();
  for (const pair of [...pairs].sort()) {
    const [o = '', d = ''] = pair.split(':');
    for (const stats of await network.lanesBetween(o, d, mode)) {
      out.set(`${stats.carrier}:${stats.origin_prefix}:${stats.destination_prefix}`, {
        carrier: stats.carrier, origin_prefix: stats.origin_prefix, destination_prefix: stats.destination_prefix,
        sample_size: stats.sample_size, p50_transit_days: stats.p50_transit_days, on_time_rate: stats.on_time_rate,
        rto_rate: stats.rto_rate, first_attempt_rate: stats.first_attempt_rate,
      });
    }
  }
  return out;
}

/**
 * The heartbeat of one claimed analysis: its due time pushed to a lease ahead, every quarter lease,
 * one write at a time; `end` stops it and then leaves the member as the run decided (off the
 * schedule, or due at a given time), never overwritten by a late beat.
 */
class Lease {
  private timer: NodeJS.Timeout;
  private beat: Promise<void> = Promise.resolve();

  private readonly store: AnalysisStore;
  private readonly member: string;
  private readonly clock: () => number;
  private readonly leaseMs: number;
  constructor(store: AnalysisStore, member: string, clock: () => number, leaseMs: number, log: RunnerOptions['log']) {
    this.store = store;
    this.member = member;
    this.clock = clock;
    this.leaseMs = leaseMs;
    this.timer = setInterval(() => {
      this.beat = this.beat.then(() => store.kv.schedule(analyzerKeys.due(), member, clock() + leaseMs))
        .catch((err: unknown) => log?.('error', `analyzer: could not renew the lease of ${member}`, err));
    }, Math.max(10, Math.floor(leaseMs / 4)));
    this.timer.unref();
  }

  async end(next: { atMs: number } | 'done'): Promise<void> {
    clearInterval(this.timer);
    await this.beat;
    if (next === 'done') await this.store.kv.unschedule(analyzerKeys.due(), this.member);
    else await this.store.kv.schedule(analyzerKeys.due(), this.member, next.atMs);
  }
}

/** How a run ends: finished (off the schedule), or to be taken up again at a time (held: the reason it waits for its key). */
type RunEnd = 'done' | { atMs: number; held?: string };

export class AnalysisRunner {
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  private loopDone: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private readonly sleepers = new Set<() => void>();
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly idleMs: number;
  private readonly retryDelaysMs: readonly number[];
  private readonly holdRecheckMs: number;

  private readonly options: RunnerOptions;
  constructor(options: RunnerOptions) {
    this.options = options;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.concurrency = options.concurrency ?? 2;
    this.idleMs = options.idleMs ?? 1_000;
    this.retryDelaysMs = options.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.holdRecheckMs = options.holdRecheckMs ?? HOLD_RECHECK_MS;
  }

  start(): void {
    this.stopping = false;
    this.loopDone ??= this.loop();
  }

  /** Looks for work now (an analysis was just accepted). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops taking analyses; those running stop after their current step and are left due at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    for (const wake of this.sleepers) wake();
    await this.loopDone;
    this.loopDone = null;
    await Promise.all(this.running.values());
  }

  private async loop(): Promise<void> {
    const { store, clock } = this.options;
    while (!this.stopping) {
      let claimed: string[] = [];
      const free = this.concurrency - this.running.size;
      if (free > 0 && store.kv.available()) {
        try {
          claimed = await store.kv.claimDue(analyzerKeys.due(), clock(), this.leaseMs, free);
        } catch (err) {
          this.options.log?.('error', 'analyzer: could not claim work', err);
        }
      }
      for (const member of claimed) {
        if (this.running.has(member)) continue;
        const run = this.run(member).catch((err: unknown) => this.options.log?.('error', `analyzer: analysis ${member} failed a step; it is retried`, err))
          .finally(() => { this.running.delete(member); this.wake(); });
        this.running.set(member, run);
      }
      if (claimed.length === 0 && !this.stopping) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.idleMs);
          this.wakeUp = () => { clearTimeout(timer); resolve(); };
        });
        this.wakeUp = null;
      }
    }
  }

  /** One claimed analysis under its lease, to its completion or until it must wait. */
  private async run(member: string): Promise<void> {
    const parsed = parseDueMember(member);
    if (!parsed) return this.options.store.kv.unschedule(analyzerKeys.due(), member);
    const lease = new Lease(this.options.store, member, this.options.clock, this.leaseMs, this.options.log);
    let end: RunEnd = { atMs: this.options.clock() + this.leaseMs };
    try {
      end = await this.work(parsed.prefix, parsed.id);
    } finally {
      // A step that threw leaves it due when its lease would have ended: tried again then.
      await lease.end(end);
    }
    // Shown held only once its next look is on the schedule: a resume that sees the reason
    // (Analyzer.keyChanged) makes it due at once after that look was written, not before it, where
    // the look would have moved it back by HOLD_RECHECK_MS (a test whose clock stands still waited for ever).
    if (end !== 'done' && end.held) await this.options.store.patchRunning(parsed.prefix, parsed.id, { held: end.held });
  }

  /** The key's standing as the run must act on it: null to go on, else how the run ends now. */
  private async standingEnd(prefix: string, id: string): Promise<RunEnd | null> {
    const { store, clock, standing } = this.options;
    if (!standing) return null;
    const now = clock();
    const answer = await standing(prefix, now);
    if (answer === 'active') return null;
    if (isGone(answer)) {
      await store.fail(prefix, id, `Stopped: the API key ${prefix} was ${answer === 'revoked' ? 'revoked' : 'deleted'}.`, now);
      return 'done';
    }
    // Stored by `run` once the next look is scheduled (see there).
    const held = `Paused: the API key ${prefix} is ${answer === 'not_started' ? 'not started yet' : answer}; ` +
      `the analysis goes on when the key is active again (resumed or renewed).`;
    return { atMs: now + this.holdRecheckMs, held };
  }

  private async work(prefix: string, id: string): Promise<RunEnd> {
    const { store, lookup, clock } = this.options;
    const doc = await store.markRunning(prefix, id);
    // Not stored (yet): a reservation whose store step has not come (or never will).
    if (!doc || doc.status === 'failed') return 'done';
    if (doc.status !== 'completed') {
      for (let chunk = 0; chunk < doc.chunks; chunk++) {
        // Leave it due at once: the next process to start (or another instance) goes on.
        if (this.stopping) return { atMs: clock() };
        const held = await this.standingEnd(prefix, id);
        if (held) return held;
        if (chunk === 0 && doc.held) await store.patchRunning(prefix, id, { held: null });
        if (await store.outputChunk(prefix, id, chunk)) continue;
        const inputs = await store.inputChunk(prefix, id, chunk);
        if (!inputs) {
          await store.fail(prefix, id, 'its stored shipments expired', clock());
          return 'done';
        }
        const rows = await Promise.all(inputs.map((input) => lookup(input, doc.mode)));
        await store.storeChunk(prefix, id, chunk, rows);
      }
      const retried = await this.retryErrors(doc);
      if (retried) return retried;
    }
    const all: AnalyzedShipment[] = [];
    for (let chunk = 0; chunk < doc.chunks; chunk++) all.push(...((await store.outputChunk(prefix, id, chunk)) ?? []));
    let completed = doc.status === 'completed' ? doc : null;
    if (!completed) {
      const network = await networkFor(this.options.network, all, doc.mode);
      const report = buildReport({ shipments: all, network, windowDays: this.options.network.windowDays, asOfMs: clock() });
      completed = await store.complete(prefix, id, report, clock()) ?? await store.get(prefix, id);
    }
    // Repeated after a crash between the two steps: the event's id is the analysis's, rows replace.
    if (completed?.status === 'completed') await this.options.onCompleted(completed, all);
    return 'done';
  }

  /**
   * The retry rounds of carrier errors (see the file's comment); the rounds made are stored, so a
   * restart goes on with the next. Null when done; else how the run ends now (stopping, held, gone).
   */
  private async retryErrors(doc: AnalysisDoc): Promise<RunEnd | null> {
    const { store, lookup, clock } = this.options;
    const { key_prefix: prefix, id } = doc;
    let round = (await store.get(prefix, id))?.retry_rounds ?? 0;
    while (round < this.retryDelaysMs.length) {
      const outputs = await Promise.all(Array.from({ length: doc.chunks }, (_, c) => store.outputChunk(prefix, id, c)));
      const errors: { chunk: number; index: number; shipment: AnalyzedShipment }[] = [];
      outputs.forEach((rows, chunk) => rows?.forEach((shipment, index) => { if (shipment.result === 'error') errors.push({ chunk, index, shipment }); }));
      if (errors.length === 0) return null;
      await this.sleep(this.retryDelaysMs[round]!);
      if (this.stopping) return { atMs: clock() };
      const held = await this.standingEnd(prefix, id);
      if (held) return held;
      // The fewest retries first, then those the carrier was never really asked: a few shipments that
      // keep failing (or a round's first call, met by a breaker that opened again) go behind the
      // others, and cannot trip the breaker again before the others had their turn. Stable: input order.
      errors.sort((a, b) => (a.shipment.retries ?? 0) - (b.shipment.retries ?? 0) || Number(!a.shipment.resting) - Number(!b.shipment.resting));
      const inputs = new Map<number, ShipmentInput[]>();
      for (const { chunk } of errors) if (!inputs.has(chunk)) inputs.set(chunk, (await store.inputChunk(prefix, id, chunk)) ?? []);
      const byCarrier = new Map<string, typeof errors>();
      for (const e of errors) {
        const group = byCarrier.get(e.shipment.carrier ?? '') ?? [];
        group.push(e);
        byCarrier.set(e.shipment.carrier ?? '', group);
      }
      const changed = new Set<number>();
      await Promise.all([...byCarrier.values()].map(async (group) => {
        for (const e of group) {
          const input = inputs.get(e.chunk)?.[e.index];
          if (!input || this.stopping) return;
          const again = await lookup(input, doc.mode);
          outputs[e.chunk]![e.index] = again.result === 'error' ? { ...again, retries: (e.shipment.retries ?? 0) + 1 } : again;
          changed.add(e.chunk);
          // The carrier rests again: its other shipments wait for the next round.
          if (again.result === 'error' && again.resting) return;
        }
      }));
      for (const chunk of changed) await store.replaceChunk(prefix, id, chunk, outputs[chunk]!);
      if (this.stopping) return { atMs: clock() };
      round++;
      await store.patchRunning(prefix, id, { retry_rounds: round });
    }
    return null;
  }

  /** A real-time wait (a breaker's rest is real time, whatever clock the rules read), cut short by stop(). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(timer); this.sleepers.delete(done); resolve(); };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  /**
   * Puts an analysis about to be stored on the schedule, due a little later: if the process dies
   * between storing it and `enqueue`, it is run anyway (a runner finding nothing stored drops it).
   */
  async reserve(prefix: string, id: string): Promise<void> {
    await this.options.store.kv.schedule(analyzerKeys.due(), dueMemberOf(prefix, id), this.options.clock() + RESERVE_GRACE_MS);
  }

  /** Takes back a reservation whose analysis was refused. */
  async release(prefix: string, id: string): Promise<void> {
    await this.options.store.kv.unschedule(analyzerKeys.due(), dueMemberOf(prefix, id));
  }

  /** Schedules an accepted analysis (due now) and wakes this process's runner. */
  async enqueue(doc: AnalysisDoc): Promise<void> {
    await this.options.store.kv.schedule(analyzerKeys.due(), dueMemberOf(doc.key_prefix, doc.id), this.options.clock());
    this.wake();
  }
}
