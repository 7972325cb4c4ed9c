import type { PollBus } from '../bus/index.ts';
import { cacheKey, isFresh, retentionMs, type CachedLookup, type TrackingCache } from '../cache/index.ts';
import { toTrackingRecord } from '../insights/index.ts';
import { laneKey, type LaneStatsSource } from '../lanes/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { Predictor } from '../prediction/index.ts';
import { normalizePoll, type BaseRecord, type NormalizedShipment, type RuleSet, type ShipmentFacts } from '../normalize/index.ts';
import type { CarrierPoll, PollSource, TrackingRecord } from '../schemas/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** The one way the service reaches carriers (lib/carriers/poll.ts): never throws for carrier trouble. */
export interface CarrierPolling {
  poll(carrier: string, awb: string, opts?: { source?: PollSource; mode?: KeyMode }): Promise<CarrierPoll>;
}

export type LookupResult =
  /**
   * `base` is the cached part of `record` (what `trackingRecordJson` reuses); `facts` what
   * normalization derived beside it (the analyzer reads the exact transit time from it).
   */
  | { kind: 'found'; record: TrackingRecord; base: BaseRecord; facts: ShipmentFacts }
  | { kind: 'not_found' }
  | { kind: 'upstream_error'; reason: string };

export interface TrackingDeps {
  cache: TrackingCache;
  carriers: CarrierPolling;
  bus: PollBus;
  rules: RuleSet;
  lanes: LaneStatsSource;
  metrics: Metrics;
  clock: () => number;
  /** The delivery model's tables (insights.prediction); absent: predictions are null. */
  predictor?: Predictor;
}

/** What one carrier poll taught us, shared by every lookup waiting on it. */
type PollResult = { kind: 'found'; shipment: NormalizedShipment } | { kind: 'not_found' } | { kind: 'error'; reason: string };

/**
 * Lookups: read-through cache (decisions.md "Cache"), one carrier poll shared by concurrent
 * lookups of the same AWB, every poll published to the bus, insights recomputed on every answer.
 */
export class TrackingService {
  private readonly inFlight = new Map<string, Promise<PollResult>>();

  constructor(private readonly deps: TrackingDeps) {}

  /**
   * Starts reading a lookup's cache entry, to be passed to `lookup`: a caller that has other I/O to
   * do first (the access step) overlaps the two, which with Redis go out in one socket write.
   */
  readCache(carrier: string, awb: string, mode: KeyMode): Promise<CachedLookup | null> {
    return this.deps.cache.get(cacheKey(mode, carrier, awb));
  }

  /** The cached record with insights as of now, or null: no carrier poll, nothing counted (watch calls). */
  async peek(carrier: string, awb: string, mode: KeyMode): Promise<TrackingRecord | null> {
    const cached = await this.deps.cache.get(cacheKey(mode, carrier, awb));
    if (!cached?.shipment) return null;
    const answer = await this.answer(cached.shipment, mode, { cached: true, stale: !isFresh(cached, this.deps.clock()) });
    return answer.kind === 'found' ? answer.record : null;
  }

  async lookup(carrier: string, awb: string, mode: KeyMode, cacheRead?: Promise<CachedLookup | null>): Promise<LookupResult> {
    const key = cacheKey(mode, carrier, awb);
    const { cache, metrics, clock } = this.deps;
    const cached = await (cacheRead ?? cache.get(key));
    if (cached && isFresh(cached, clock())) {
      metrics.cacheHits.inc({ carrier, kind: cached.shipment ? 'fresh' : 'not_found' });
      return cached.shipment ? this.answer(cached.shipment, mode, { cached: true, stale: false }) : { kind: 'not_found' };
    }

    const polled = await this.pollOnce(key, carrier, awb, mode, 'lookup');
    if (polled.kind === 'found') return this.answer(polled.shipment, mode, { cached: false, stale: false });
    if (polled.kind === 'not_found') return { kind: 'not_found' };
    // Carrier unreachable: the last known record, marked stale, beats an error (interface spec).
    if (cached?.shipment) {
      metrics.cacheHits.inc({ carrier, kind: 'stale' });
      return this.answer(cached.shipment, mode, { cached: true, stale: true });
    }
    return { kind: 'upstream_error', reason: polled.reason };
  }

  /**
   * Polls the carrier for the poller (source `poller`) and refreshes the cache, so deliveries are
   * learned without a client asking. Consumes no customer's lookups. Returns the outcome's kind.
   */
  async refresh(carrier: string, awb: string, mode: KeyMode): Promise<PollResult['kind']> {
    return (await this.pollOnce(cacheKey(mode, carrier, awb), carrier, awb, mode, 'poller')).kind;
  }

  private pollOnce(key: string, carrier: string, awb: string, mode: KeyMode, source: PollSource): Promise<PollResult> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.pollAndStore(key, carrier, awb, mode, source).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async pollAndStore(key: string, carrier: string, awb: string, mode: KeyMode, source: PollSource): Promise<PollResult> {
    const { carriers, bus, rules, cache, metrics } = this.deps;
    const started = process.hrtime.bigint();
    const poll = await carriers.poll(carrier, awb, { source, mode });
    metrics.carrierLatency.observe({ carrier, outcome: poll.outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    bus.publish(poll, mode);

    const result = normalizePoll(poll, rules);
    if (result.kind === 'error') {
      metrics.carrierErrors.inc({ carrier });
      return { kind: 'error', reason: result.error };
    }
    const entry: CachedLookup = {
      shipment: result.kind === 'found' ? result.shipment : null,
      polledAtMs: Date.parse(poll.polled_at),
    };
    if (entry.shipment && entry.shipment.facts.unmapped_scans > 0) metrics.unmappedScans.inc({ carrier }, entry.shipment.facts.unmapped_scans);
    await cache.set(key, entry, retentionMs(entry));
    return result.kind === 'found' ? { kind: 'found', shipment: result.shipment } : { kind: 'not_found' };
  }

  private async answer(shipment: NormalizedShipment, mode: KeyMode, flags: { cached: boolean; stale: boolean }): Promise<LookupResult> {
    const lane = shipment.facts.lane ? await this.deps.lanes.get(laneKey(shipment.facts.lane, mode)) : null;
    const nowMs = this.deps.clock();
    const prediction = this.deps.predictor?.predictRecord(shipment.record, shipment.facts, mode, nowMs) ?? null;
    const record = toTrackingRecord(shipment.record, shipment.facts, { nowMs, lane, prediction, ...flags });
    return { kind: 'found', record, base: shipment.record, facts: shipment.facts };
  }
}
