/**
 * The analyzer's parts over one state store: analyses and their allowance (store.ts), the
 * background runner, and the completion event. An app creates one and starts
 * its runner; the API routes use the rest.
 */
import type { KeyRecord } from '../access/index.ts';
import type { KeyStanding, StandingOf } from '../access/standing.ts';
import type { PlanName, Plans } from '../config/index.ts';
import type { TrackingService } from '../tracking/index.ts';
import type { Kv } from '../kv/index.ts';
import type { EventLog } from '../push/index.ts';
import { analysisCompletedEvent } from './events.ts';
import { trackingLookup, type AnalyzerLookup } from './lookup.ts';
import { AnalysisRunner, type NetworkSource, type RunnerOptions } from './runner.ts';
import { AnalysisStore, analyzerKeys, dueMemberOf, newAnalysisId, type AcceptResult, type AnalysisDoc } from './store.ts';
import type { AnalyzedShipment, RejectedRow, ShipmentInput } from './types.ts';

/** A key's newest analyses looked at for held ones when it is active again. */
const RESUME_SCAN = 50;

/** contracts.md: the plans that include the analyzer. */
export const ANALYZER_PLANS: readonly PlanName[] = ['growth', 'business'];

export interface AnalyzerUsage {
  shipments_used: number;
  shipments_limit: number;
}

/** Where completed analyses' shipments go for analysts (ClickHouse `analysis_shipments`), if anywhere. */
export type AnalysisRowSink = (doc: AnalysisDoc, shipments: readonly AnalyzedShipment[]) => Promise<void>;

export interface AnalyzerOptions {
  kv: Kv;
  tracking: Pick<TrackingService, 'lookup' | 'readCache'>;
  network: NetworkSource;
  plans: Plans;
  /** push's event log: `analysis.completed` goes the way every webhook event goes. */
  events: EventLog;
  clock: () => number;
  rows?: AnalysisRowSink;
  /** Replaces the tracking lookup (tests count or slow it). */
  lookup?: AnalyzerLookup;
  runner?: Partial<Pick<RunnerOptions, 'leaseMs' | 'concurrency' | 'idleMs' | 'retryDelaysMs' | 'holdRecheckMs'>>;
  /** The key's standing (lib/access standingFromStore): revoked keys' analyses stop, suspended ones wait. */
  standing?: StandingOf;
  log?: RunnerOptions['log'];
}

export class Analyzer {
  readonly store: AnalysisStore;
  readonly runner: AnalysisRunner;

  private readonly options: AnalyzerOptions;
  constructor(options: AnalyzerOptions) {
    this.options = options;
    this.store = new AnalysisStore(options.kv, options.clock);
    this.runner = new AnalysisRunner({
      store: this.store,
      lookup: options.lookup ?? trackingLookup(options.tracking, options.clock),
      network: options.network,
      clock: options.clock,
      standing: options.standing,
      log: options.log,
      ...options.runner,
      onCompleted: async (doc, shipments) => {
        await options.events.publish([analysisCompletedEvent(doc)]);
        await options.rows?.(doc, shipments);
      },
    });
  }

  get windowDays(): number {
    return this.options.network.windowDays;
  }

  includes(record: KeyRecord): boolean {
    return ANALYZER_PLANS.includes(record.plan);
  }

  /** The key's allowance per period: its override, else its plan's lookup number. */
  async limitOf(record: KeyRecord): Promise<number> {
    return (await this.store.limitOverride(record.prefix)) ?? this.options.plans[record.plan].lookups;
  }

  /** The usage record's `analyzer` part; null for plans without the analyzer. */
  async usage(record: KeyRecord): Promise<AnalyzerUsage | null> {
    if (!this.includes(record)) return null;
    const [used, limit] = await Promise.all([this.store.used(record.prefix, record.period_start), this.limitOf(record)]);
    return { shipments_used: used, shipments_limit: limit };
  }

  /**
   * Counts and stores an analysis (or refuses it whole) and schedules its run. It is reserved on the
   * schedule before it is stored, so a crash between storing and scheduling cannot leave it queued
   * for good (runner.ts reserve).
   */
  async accept(
    record: KeyRecord, name: string | null, shipments: readonly ShipmentInput[], rejected: RejectedRow[], rejectedCount: number,
  ): Promise<AcceptResult> {
    const id = newAnalysisId();
    await this.runner.reserve(record.prefix, id);
    const result = await this.store.accept({
      id, prefix: record.prefix, mode: record.mode, name, periodStart: record.period_start, limit: await this.limitOf(record),
      shipments, rejected, rejectedCount, nowMs: this.options.clock(),
    });
    if (result.ok) await this.runner.enqueue(result.doc);
    else await this.runner.release(record.prefix, id);
    return result;
  }

  /**
   * A key's standing changed (admin resume or renew, a paid renewal): once it is active, its held
   * analyses are due at once, on whichever instance looks first, instead of at their next look
   * (HOLD_RECHECK_MS). Held analyses are recent ones: the newest RESUME_SCAN are looked at.
   * Revoked and suspended keys need nothing here: the runner asks the standing before every chunk.
   */
  async keyChanged(prefix: string, standing: KeyStanding): Promise<void> {
    if (standing !== 'active') return;
    const { docs } = await this.store.list(prefix, null, RESUME_SCAN);
    const held = docs.filter((d) => d.status === 'running' && d.held);
    for (const doc of held) await this.options.kv.schedule(analyzerKeys.due(), dueMemberOf(prefix, doc.id), this.options.clock());
    if (held.length > 0) this.runner.wake();
  }

  start(): void {
    this.runner.start();
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }
}
