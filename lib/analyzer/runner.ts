/**
 * The background work of analyses. Any process serving the API runs one; an analysis waiting to run
 * is on the state store's global schedule, and a runner takes it with a lease (the store's claim
 * step moves its due time to the lease's end atomically), so one process at a time works on it;
 * the lease is extended after each chunk, and a process that dies lets another take it when the
 * lease ends. Results are stored chunk by chunk with the progress they make, so a restart resumes
 * at the first chunk without results and ends with the same report; shipments were counted when
 * the analysis was accepted, so nothing is counted twice.
 */
import type { WindowedLaneStats } from '../lanes/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import type { AnalyzerLookup } from './lookup.ts';
import { buildReport } from './report.ts';
import { ANALYSIS_RETENTION_MS, analyzerKeys, dueMemberOf, parseDueMember, type AnalysisDoc, type AnalysisStore } from './store.ts';
import type { AnalyzedShipment, NetworkLaneFigures } from './types.ts';

export interface NetworkSource {
  lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]>;
  readonly windowDays: number;
}

export interface RunnerOptions {
  store: AnalysisStore;
  lookup: AnalyzerLookup;
  network: NetworkSource;
  /** After an analysis completes (its event, its ClickHouse rows). Must be safe to repeat. */
  onCompleted: (doc: AnalysisDoc, shipments: readonly AnalyzedShipment[]) => Promise<void>;
  clock: () => number;
  /** How long a claim holds an analysis without a sign of life; default 2 minutes. */
  leaseMs?: number;
  /** Analyses one process runs at once; default 2. */
  concurrency?: number;
  /** How often an idle runner looks for work (work accepted in this process wakes it at once). */
  idleMs?: number;
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

export class AnalysisRunner {
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  private loopDone: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly idleMs: number;

  constructor(private readonly options: RunnerOptions) {
    this.leaseMs = options.leaseMs ?? 120_000;
    this.concurrency = options.concurrency ?? 2;
    this.idleMs = options.idleMs ?? 1_000;
  }

  start(): void {
    this.stopping = false;
    this.loopDone ??= this.loop();
  }

  /** Looks for work now (an analysis was just accepted). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops taking analyses; those running stop after their current chunk and are left due at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
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

  /** One claimed analysis, from its first chunk without results to its completion. */
  private async run(member: string): Promise<void> {
    const { store, lookup, clock } = this.options;
    const parsed = parseDueMember(member);
    const due = analyzerKeys.due();
    if (!parsed) return store.kv.unschedule(due, member);
    const { prefix, id } = parsed;
    const doc = await store.markRunning(prefix, id);
    if (!doc || doc.status === 'failed') return store.kv.unschedule(due, member);
    if (doc.status !== 'completed') {
      for (let chunk = 0; chunk < doc.chunks; chunk++) {
        if (this.stopping) {
          // Leave it due at once: the next process to start (or another instance) goes on.
          await store.kv.schedule(due, member, clock());
          return;
        }
        if (await store.outputChunk(prefix, id, chunk)) continue;
        const inputs = await store.inputChunk(prefix, id, chunk);
        if (!inputs) return this.fail(prefix, id, member, 'its stored shipments expired');
        const rows = await Promise.all(inputs.map((input) => lookup(input, doc.mode)));
        await store.storeChunk(prefix, id, chunk, rows);
        // A sign of life: the lease goes on.
        await store.kv.schedule(due, member, clock() + this.leaseMs);
      }
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
    await store.kv.unschedule(due, member);
  }

  private async fail(prefix: string, id: string, member: string, reason: string): Promise<void> {
    const { store } = this.options;
    await store.kv.update<AnalysisDoc, null>(analyzerKeys.analysis(prefix, id), (doc) => (doc && doc.status !== 'completed'
      ? { next: { ...doc, status: 'failed', error: reason, completed_ms: this.options.clock() }, result: null, ttlMs: ANALYSIS_RETENTION_MS }
      : { result: null }));
    await store.kv.unschedule(analyzerKeys.due(), member);
  }

  /** Schedules an accepted analysis and wakes this process's runner. */
  async enqueue(doc: AnalysisDoc): Promise<void> {
    await this.options.store.kv.schedule(analyzerKeys.due(), dueMemberOf(doc.key_prefix, doc.id), this.options.clock());
    this.wake();
  }
}
