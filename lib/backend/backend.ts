/**
 * The one switch. Which services are configured (REDIS_URL, KAFKA_BROKERS, CLICKHOUSE_URL) is read
 * here and nowhere else: every start (API, poller, normalizer, dispatcher, embedded, combined) opens
 * one backend per process and asks it for what it needs — stores, connections, the raw-poll bus,
 * lane sources, the delivery model, refresh candidates, readiness probes and the metrics registry —
 * never for a backend kind. Each store keeps its interface and both implementations in its own
 * folder; this folder picks between them and opens each once per process, so the apps of one
 * process share one store, one connection per service and one registry (`/metrics` shows them all).
 *
 * Connections per process: one Redis connection (auto-pipelined; no store issues a blocking command),
 * one ClickHouse client (a second one with a long request timeout only for the normalizer's model
 * rebuild: `clickhouseForRebuilds`), one kafkajs client (each producer and consumer group then holds
 * its own broker connections, as kafkajs does).
 */
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { EmbeddedAccessStore, RedisAccessStore, embeddedAccessDir, type AccessStore } from '../access/index.ts';
import { writeAnalysisShipments } from '../analyzer/clickhouse-rows.ts';
import type { AnalyzerOptions } from '../analyzer/index.ts';
import {
  ClickHousePaymentReport, EmbeddedPaymentStore, RedisPaymentStore, embeddedPaymentsDir, type PaymentReport, type PaymentStore,
} from '../billing/index.ts';
import { createMemoryCache, createRedisCache, embeddedRecordsDir, type TrackingCache } from '../cache/index.ts';
import { createClickHouseClient, pingClickHouse, resolveTarget, type ClickHouseClient, type ClickHouseTarget } from '../clickhouse/index.ts';
import type { Env, Plans } from '../config/index.ts';
import { EmbeddedIdempotencyStore, RedisIdempotencyStore, embeddedIdempotencyDir, type IdempotencyStore } from '../idempotency/index.ts';
import { createKafka } from '../kafka/client.ts';
import { EmbeddedKv, RedisKv, type Kv } from '../kv/index.ts';
import { createMetrics, type Metrics } from '../metrics/index.ts';
import { brokersCheck, kafkaCheck, type ReadinessCheck } from '../readiness/index.ts';
import { KafkaEventLog, type EventLog } from '../push/index.ts';
import { connectRedis, type RedisClient } from '../redis/index.ts';
import { EmbeddedThrottle, RedisThrottle, type AddressThrottle } from '../throttle/index.ts';
import { pipelineParts, type BackendLog, type PipelineParts, type PipelineSettings } from './pipeline.ts';

/** Prefix of every Redis key of one deployment; tests set their own so runs sharing one Redis never meet. */
export const DEFAULT_NAMESPACE = 'trk:';

export type { BackendLog };

export interface BackendOptions {
  /** Redis, or a Redis Cluster (`redis+cluster://`); unset: the embedded engine under `dataDir`. */
  redisUrl: string | undefined;
  /** Kafka: the raw-poll log and push's event log; unset: the in-process bus and the raw-poll log under `dataDir`. */
  kafkaBrokers?: string | undefined;
  /** ClickHouse: the lane benchmarks, the delivery model and the analysts' tables; unset: computed in process. */
  clickhouseUrl?: string | undefined;
  /** ClickHouse database: default a path in the URL, else `tracking` (resolveTarget); tests use their own. */
  clickhouseDatabase?: string | undefined;
  /** Default DEFAULT_NAMESPACE. */
  namespace?: string;
  dataDir: string;
  clock: () => number;
  /** The process's name for Kafka (its client id). */
  name?: string;
  log?: BackendLog;
  /** Lane window, lane cache and model rebuild settings (default: the environment's defaults). */
  pipeline?: PipelineSettings;
}

const DEFAULT_PIPELINE: PipelineSettings = { laneWindowDays: 90, laneCacheTtlMs: 60_000, predictionRebuildMs: 600_000 };

/** The options of `env`'s services; `overrides` are what tests and starts set on top (namespace, database, name). */
export function backendOptionsOf(env: Env, overrides: Partial<BackendOptions> = {}): BackendOptions {
  return {
    redisUrl: env.REDIS_URL,
    kafkaBrokers: env.KAFKA_BROKERS,
    clickhouseUrl: env.CLICKHOUSE_URL,
    clickhouseDatabase: env.CLICKHOUSE_DATABASE,
    dataDir: env.DATA_DIR,
    clock: Date.now,
    pipeline: { laneWindowDays: env.LANE_WINDOW_DAYS, laneCacheTtlMs: env.LANE_CACHE_TTL_MS, predictionRebuildMs: env.PREDICTION_REBUILD_SECONDS * 1000 },
    ...overrides,
  };
}

export interface CacheOptions {
  maxBytes: number;
  onError: (err: unknown) => void;
}

/** Each method opens its part at the first call and hands the same one to later calls. */
export interface Backend extends PipelineParts {
  /** Where keys, limits, the cache and push state live. */
  readonly kind: 'redis' | 'embedded';
  /** Whether polls go to Kafka (the distributed pipeline) or to the in-process normalizer. */
  readonly pipeline: 'kafka' | 'embedded';
  readonly namespace: string;
  readonly dataDir: string;
  readonly clock: () => number;
  readonly log: BackendLog;
  access(plans: Plans): AccessStore;
  throttle(): AddressThrottle;
  idempotency(): IdempotencyStore;
  payments(): PaymentStore;
  /** A key-value store named `name`: Redis keys under `<namespace><name>:`, or the journal in `<dataDir>/<name>/`. */
  kv(name: string): Kv;
  /** The tracking cache: Redis, or in process bounded by `maxBytes` with delivered records also on disk. */
  cache(options: CacheOptions): TrackingCache;
  /** The kafkajs client; throws when KAFKA_BROKERS is not set. */
  kafka(): Kafka;
  /** The ClickHouse client, or null when CLICKHOUSE_URL is not set. */
  clickhouse(): ClickHouseClient | null;
  /** A client for the delivery model's rebuild (minutes, past the 30 s timeout of row writes); null without ClickHouse. */
  clickhouseForRebuilds(): ClickHouseClient | null;
  readonly clickhouseTarget: ClickHouseTarget | null;
  /** Push's event log: Kafka's webhook topic (the dispatcher app delivers), or undefined: this process's own dispatcher. */
  pushEvents(): EventLog | undefined;
  /** Where settled payments are also written for analysts: ClickHouse's payments table, or nowhere. */
  paymentReport(): PaymentReport | null;
  /** The analyzer's rows of completed analyses (ClickHouse analysis_shipments), or none. */
  analysisRows(): { rows?: AnalysisRows };
  /** The process's one registry (default process metrics and every part's series). */
  readonly metrics: Metrics;
  /** The services' probes: Redis answers PING, a Kafka broker takes a connection, ClickHouse answers (degrades). */
  readiness(): ReadinessCheck[];
  /** Runs `close` when the backend closes, before the stores and connections (latest first). */
  onClose(close: () => Promise<void> | void): void;
  /** Closes what was opened: parts registered with onClose, then stores, then connections. */
  close(): Promise<void>;
}

interface Closable { close(): Promise<void> }
type AnalysisRows = NonNullable<AnalyzerOptions['rows']>;

export function openBackend(options: BackendOptions): Backend {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const log: BackendLog = options.log ?? ((level, message) => console[level === 'info' ? 'log' : level](message));
  const opened = new Map<string, unknown>();
  const closers: (() => Promise<void> | void)[] = [];
  const stores: Closable[] = [];
  /** Opens `name` once; a store's close is run once, by the backend (apps sharing it do not close it). */
  const once = <T extends Closable>(name: string, open: () => T): T => {
    const known = opened.get(name);
    if (known !== undefined) return known as T;
    const store = open();
    const close = store.close.bind(store);
    let closing: Promise<void> | null = null;
    store.close = () => (closing ??= close());
    opened.set(name, store);
    stores.push(store);
    return store;
  };

  let redis: RedisClient | null = null;
  const redisClient = (): RedisClient => {
    // One connection for every store, auto-pipelined. The access store and the cache each send the
    // lookups of one event-loop turn as one script call (lib/access/README.md). One Redis or a Redis
    // Cluster: every store keeps each call to one slot.
    redis ??= connectRedis(options.redisUrl!, { lazyConnect: false, maxRetriesPerRequest: 2, enableAutoPipelining: true }, log);
    return redis;
  };
  let kafka: Kafka | null = null;
  const target = options.clickhouseUrl ? resolveTarget(options.clickhouseUrl, options.clickhouseDatabase) : null;
  let clickhouse: ClickHouseClient | null = null;
  let rebuilds: ClickHouseClient | null = null;
  const dataDir = options.dataDir;
  const { clock } = options;
  const embedded = !options.redisUrl;
  const clickhouseClient = (): ClickHouseClient | null => {
    if (!target) return null;
    clickhouse ??= createClickHouseClient(target);
    return clickhouse;
  };
  const onClose = (close: () => Promise<void> | void) => { closers.push(close); };
  const metrics = createMetrics();
  const pipeline = pipelineParts(options.pipeline ?? DEFAULT_PIPELINE, {
    registry: metrics.registry,
    kafka: options.kafkaBrokers ? () => kafkaClient() : null, clickhouse: clickhouseClient(), dataDir, clock, log, onClose,
  });
  const kafkaClient = (): Kafka => {
    if (!options.kafkaBrokers) throw new Error('KAFKA_BROKERS is not set');
    kafka ??= createKafka({ brokers: options.kafkaBrokers, clientId: options.name ?? 'tracking', log });
    return kafka;
  };

  return {
    ...pipeline,
    kind: embedded ? 'embedded' : 'redis',
    pipeline: options.kafkaBrokers ? 'kafka' : 'embedded',
    namespace, dataDir, clock, log,
    access: (plans) => once('access', () => (embedded
      ? new EmbeddedAccessStore({ plans, dir: embeddedAccessDir(dataDir) })
      : new RedisAccessStore({ plans, redis: redisClient(), namespace: `${namespace}access:` }))),
    throttle: () => once('throttle', () => (embedded ? new EmbeddedThrottle(dataDir) : new RedisThrottle(redisClient(), `${namespace}throttle:`))),
    idempotency: () => once('idempotency', () => (embedded
      ? new EmbeddedIdempotencyStore(embeddedIdempotencyDir(dataDir), clock)
      : new RedisIdempotencyStore(redisClient(), `${namespace}idempotency:`))),
    payments: () => once('payments', () => (embedded
      ? new EmbeddedPaymentStore(embeddedPaymentsDir(dataDir))
      : new RedisPaymentStore(redisClient(), `${namespace}payments:`))),
    kv: (name) => once(`kv:${name}`, () => (embedded ? new EmbeddedKv(join(dataDir, name), clock) : new RedisKv(redisClient(), `${namespace}${name}:`))),
    // Embedded: bounded by bytes; delivered records also on disk, so evicting one never costs a carrier poll.
    cache: ({ maxBytes, onError }) => once('cache', () => (embedded
      ? createMemoryCache({ maxBytes, dir: embeddedRecordsDir(dataDir), onError })
      : createRedisCache(redisClient(), `${namespace}cache:`))),
    kafka: kafkaClient,
    clickhouse: clickhouseClient,
    clickhouseForRebuilds() {
      if (!target) return null;
      rebuilds ??= createClickHouseClient(target, { request_timeout: 300_000 });
      return rebuilds;
    },
    clickhouseTarget: target,
    pushEvents: () => (options.kafkaBrokers ? once('push-events', () => new KafkaEventLog(kafkaClient())) : undefined),
    paymentReport() {
      const client = clickhouseClient();
      return client ? new ClickHousePaymentReport(client) : null;
    },
    analysisRows() {
      const client = clickhouseClient();
      return client ? { rows: (doc, shipments) => writeAnalysisShipments(client, doc, shipments) } : {};
    },
    metrics,
    readiness() {
      const checks: ReadinessCheck[] = [];
      if (!embedded) checks.push({ name: 'redis', check: async () => { await redisClient().ping(); } });
      if (options.kafkaBrokers) {
        // With a raw-poll producer in this process its state counts too (a spool that grows).
        const bus = pipeline.openedBus();
        checks.push(bus ? kafkaCheck(bus, options.kafkaBrokers) : brokersCheck(options.kafkaBrokers));
      }
      if (target) {
        const client = clickhouseClient()!;
        checks.push({
          name: 'clickhouse',
          degrades: true,
          // ping() answers { success: false } rather than throwing when ClickHouse is away.
          check: async () => { if (!(await pingClickHouse(client))) throw new Error('ClickHouse does not answer'); },
        });
      }
      return checks;
    },
    onClose,
    async close() {
      for (const close of closers.splice(0).reverse()) await close();
      for (const store of stores.splice(0).reverse()) await store.close();
      opened.clear();
      await clickhouse?.close();
      await rebuilds?.close();
      redis?.disconnect();
    },
  };
}
