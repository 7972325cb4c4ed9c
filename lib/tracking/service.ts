import type { PollBus } from '../bus/index.ts';
import { cacheKey, isFresh, retentionMs, type CachedLookup, type TrackingCache } from '../cache/index.ts';
import { answerJson, compactShipment, type CachedShipment } from '../cache/entry.ts';
import { computeInsights } from '../insights/index.ts';
import { laneKey, type LaneStatsSource } from '../lanes/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { promiseProbabilityOf, type Predictor } from '../prediction/index.ts';
import { normalizePoll, type BaseRecord, type NormalizedShipment, type RuleSet, type ShipmentFacts } from '../normalize/index.ts';
import { parseAwb, type Awb, type CarrierPoll, type Insights, type PollSource, type TrackingRecord } from '../schemas/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** The one way the service reaches carriers (lib/carriers/poll.ts): never throws for carrier trouble. */
export interface CarrierPolling {
  poll(carrier: string, awb: Awb, opts?: { source?: PollSource; mode?: KeyMode }): Promise<CarrierPoll>;
}

/**
 * A record answered: the cache entry it came from, this answer's flags and insights. The answer's
 * bytes are `json()` (the entry's prepared text around them); `record`, the parsed object, is made
 * only for callers that read fields (the analyzer, watches, POST /v1/trackings).
 */
export class FoundRecord {
  readonly kind = 'found' as const;
  private text: string | null = null;
  private parsed: TrackingRecord | null = null;

  readonly entry: CachedShipment;
  readonly cached: boolean;
  readonly stale: boolean;
  readonly insights: Insights;
  /** The normalized record when the answer comes from a poll just made (saves a parse). */
  private readonly base: BaseRecord | null;
  constructor(
    entry: CachedShipment, cached: boolean, stale: boolean, insights: Insights,
    base: BaseRecord | null = null,
  ) {
    this.entry = entry;
    this.cached = cached;
    this.stale = stale;
    this.insights = insights;
    this.base = base;
  }

  /** What normalization derived beside the record (the analyzer reads the exact transit time). */
  get facts(): ShipmentFacts {
    return this.entry.facts;
  }

  /** The answer's JSON text, exactly `JSON.stringify(record)`. */
  json(): string {
    return (this.text ??= answerJson(this.entry, this.cached, this.stale, JSON.stringify(this.insights)));
  }

  get record(): TrackingRecord {
    if (this.parsed === null) {
      this.parsed = this.base
        ? { ...this.base, cached: this.cached, stale: this.stale, insights: this.insights }
        : JSON.parse(this.json()) as TrackingRecord;
    }
    return this.parsed;
  }
}

export type LookupResult =
  | FoundRecord
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
type PollResult = { kind: 'found'; shipment: NormalizedShipment; entry: CachedShipment } | { kind: 'not_found' } | { kind: 'error'; reason: string };

/**
 * Lookups: read-through cache (decisions.md "Cache"), one carrier poll shared by concurrent
 * lookups of the same AWB, every poll published to the bus, insights recomputed on every answer.
 */
export class TrackingService {
  private readonly inFlight = new Map<string, Promise<PollResult>>();

  private readonly deps: TrackingDeps;
  constructor(deps: TrackingDeps) {
    this.deps = deps;
  }

  /**
   * Starts reading a lookup's cache entry, to be passed to `lookup`: a caller that has other I/O to
   * do first (the access step) overlaps the two, which with Redis go out in one socket write.
   */
  readCache(carrier: string, awb: Awb, mode: KeyMode): Promise<CachedLookup | null> {
    return this.deps.cache.get(cacheKey(mode, carrier, awb));
  }

  /**
   * The cached record with insights as of now, or null: no carrier poll, nothing counted (watch
   * calls). A watch's stored number may come as text: it is parsed here, and one the parser refuses
   * has no record.
   */
  async peek(carrier: string, awb: Awb | string, mode: KeyMode): Promise<TrackingRecord | null> {
    return (await this.peekFound(carrier, awb, mode))?.record ?? null;
  }

  /** `peek`'s answer with the means to ask its promise (a watch's catch-up: lib/push CurrentShipment). */
  async peekShipment(
    carrier: string, awb: Awb | string, mode: KeyMode,
  ): Promise<{ record: TrackingRecord; promiseProbability(promisedBy: string): number | null } | null> {
    const found = await this.peekFound(carrier, awb, mode);
    return found ? { record: found.record, promiseProbability: (day) => this.promiseProbability(found, mode, day) } : null;
  }

  /** The cached answer as `peek` makes it, or null. */
  async peekFound(carrier: string, awb: Awb | string, mode: KeyMode): Promise<FoundRecord | null> {
    const number = parseAwb(awb);
    if (number === null) return null;
    const cached = await this.deps.cache.get(cacheKey(mode, carrier, number));
    if (!cached?.shipment) return null;
    return this.answer(cached.shipment, mode, { cached: true, stale: !isFresh(cached, this.deps.clock()) });
  }

  /**
   * P(delivered by the end of IST day `promisedBy`) of an answered record, as of now: a watch's
   * `insights.prediction.promise` (lib/prediction promise.ts). Null without a prediction.
   */
  promiseProbability(found: FoundRecord, mode: KeyMode, promisedBy: string): number | null {
    if (found.insights.prediction === null) return null;
    return promiseProbabilityOf(this.deps.predictor, found.entry.answer.query, found.entry.facts, mode, this.deps.clock(), promisedBy);
  }

  async lookup(carrier: string, awb: Awb, mode: KeyMode, cacheRead?: Promise<CachedLookup | null>): Promise<LookupResult> {
    const key = cacheKey(mode, carrier, awb);
    const { cache, metrics, clock } = this.deps;
    const cached = await (cacheRead ?? cache.get(key));
    if (cached && isFresh(cached, clock())) {
      metrics.cacheHits.inc({ carrier, kind: cached.shipment ? 'fresh' : 'not_found' });
      return cached.shipment ? this.answer(cached.shipment, mode, { cached: true, stale: false }) : { kind: 'not_found' };
    }

    const polled = await this.pollOnce(key, carrier, awb, mode, 'lookup');
    if (polled.kind === 'found') return this.answer(polled.entry, mode, { cached: false, stale: false }, polled.shipment.record);
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
  async refresh(carrier: string, awb: Awb, mode: KeyMode): Promise<PollResult['kind']> {
    return (await this.pollOnce(cacheKey(mode, carrier, awb), carrier, awb, mode, 'poller')).kind;
  }

  private pollOnce(key: string, carrier: string, awb: Awb, mode: KeyMode, source: PollSource): Promise<PollResult> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.pollAndStore(key, carrier, awb, mode, source).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async pollAndStore(key: string, carrier: string, awb: Awb, mode: KeyMode, source: PollSource): Promise<PollResult> {
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
    // The compact form (lib/cache/entry.ts) is what is cached and what every answer is made from.
    const entry: CachedLookup = {
      shipment: result.kind === 'found' ? compactShipment(result.shipment) : null,
      polledAtMs: Date.parse(poll.polled_at),
    };
    if (entry.shipment && entry.shipment.facts.unmapped_scans > 0) metrics.unmappedScans.inc({ carrier }, entry.shipment.facts.unmapped_scans);
    await cache.set(key, entry, retentionMs(entry));
    return result.kind === 'found' ? { kind: 'found', shipment: result.shipment, entry: entry.shipment! } : { kind: 'not_found' };
  }

  /**
   * Insights recomputed as of now on every answer, cached or not (hours since last scan, stuck),
   * the prediction read from the model's tables with the entry's few facts.
   */
  private async answer(entry: CachedShipment, mode: KeyMode, flags: { cached: boolean; stale: boolean }, base: BaseRecord | null = null): Promise<FoundRecord> {
    const lane = entry.facts.lane ? await this.deps.lanes.get(laneKey(entry.facts.lane, mode)) : null;
    const nowMs = this.deps.clock();
    const prediction = this.deps.predictor?.predictFacts(entry.answer.query, entry.facts, mode, nowMs) ?? null;
    const insights = computeInsights(entry.answer, entry.facts, nowMs, lane, prediction);
    return new FoundRecord(entry, flags.cached, flags.stale, insights, base);
  }
}
