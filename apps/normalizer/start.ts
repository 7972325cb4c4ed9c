import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import cron from 'node-cron';
import { standingFromStore } from '../../lib/access/index.ts';
import { backendOptionsOf, openBackend, type Backend } from '../../lib/backend/index.ts';
import {
  ClickHouseWriter, LaneClosureSink, PredictionObservationSink, migrate, rebuildPredictionModel, refreshLaneStats,
  type ClickHouseClient, type ClickHouseWriterOptions,
} from '../../lib/clickhouse/index.ts';
import type { Env } from '../../lib/config/index.ts';
import { createNormalizerMetrics } from '../../lib/metrics/index.ts';
import { NormalizerConsumer } from '../../lib/pipeline/normalizer.ts';
import { loadProduct } from '../../lib/product/index.ts';
import { createHealthServer } from '../../lib/process/health.ts';
import { StopSteps } from '../../lib/process/run.ts';
import { ChangeDetector, PollChangeConsumer, ensureWebhookTopic } from '../../lib/push/index.ts';

/**
 * The writer's batching in the normalizer app (bench/pipeline.ts measures with the same).
 * maxBatchRows 30,000 rows per table ≈ 3,000 ten-scan polls per flush: the normalizer asks for a
 * flush after every batch and flushes run back to back, so this caps how much one flush takes while
 * the next batches are normalized. Measured (`npm run bench -- pipeline`, 20,000 polls): unbounded
 * flushes made the last one ~14,000 polls inserted with Node idle (~1.9 s of tail); 5,000 (the
 * default, ~500 polls) pays the per-flush round trips and parts too often. flushIntervalMs stays
 * 1 s: the normalizer's own flush() calls come first, the timer only matters for a trickle.
 */
export const NORMALIZER_WRITER_OPTIONS: ClickHouseWriterOptions = { maxBatchRows: 30_000 };

export interface NormalizerApp {
  consumer: NormalizerConsumer;
  writer: ClickHouseWriter;
  clickhouse: ClickHouseClient;
  health: FastifyInstance;
  /** Recomputes lane_stats and lane_benchmarks of changed lanes now (the cron job does it every minute). */
  refreshLanes(): Promise<void>;
  /** Rebuilds the delivery model in ClickHouse now (the timer does it every PREDICTION_REBUILD_SECONDS). */
  rebuildPrediction(): Promise<void>;
  stop(): Promise<void>;
  stopStep(): string | null;
}

export interface NormalizerStartOptions {
  /** The process's backend (the combined start shares one); default: one opened from `env`, owned and closed by the normalizer. */
  backend?: Backend;
  /** For the backend the normalizer opens: the ClickHouse database (default `tracking`; tests use their own). */
  database?: string;
  /** Kafka consumer group (default tracking-normalizer). */
  groupId?: string;
  /** Health server port; 0 = a free port, null = none. */
  healthPort?: number | null;
  /** Cron of the lane benchmark refresh (default every minute). */
  laneRefreshCron?: string;
  /** Push's change detection: its consumer group (default tracking-push-detector) and Redis prefix. */
  pushGroupId?: string;
  redisNamespace?: string;
  /** New consumer groups start at the topics' end (tests). */
  fromLatest?: boolean;
  /** Days of closed shipments in lane_stats and the lookup's benchmark (default LANE_WINDOW_DAYS, else 90). */
  laneWindowDays?: number;
  /** The raw-poll topic (default tracking.carrier-polls.v1; tests use their own). */
  topic?: string;
  /** The lane refresh's clock: its window ends at this time (default the wall clock; tests pin a history's end). */
  laneClock?: () => number;
}

/**
 * The normalizer app: migrations, the batched ClickHouse writer, the Kafka consumer group, the
 * lane benchmark refresh and a health server. Stops in order: health → push detection → consumer
 * (its last flush bounded: BatchFlow.stop) → cron → writer (the insert under way only; the rest is
 * uncommitted, left to Kafka).
 */
export async function startNormalizer(env: Env, options: NormalizerStartOptions = {}): Promise<NormalizerApp> {
  if (!env.KAFKA_BROKERS || !env.CLICKHOUSE_URL) throw new Error('the normalizer needs KAFKA_BROKERS and CLICKHOUSE_URL');
  const product = loadProduct(env.CONFIG_DIR);
  const laneWindowDays = options.laneWindowDays ?? env.LANE_WINDOW_DAYS;
  // The backend's parts (Kafka's client above all) log through this app's logger, made just below.
  const appLog: { to: FastifyBaseLogger | null } = { to: null };
  const backend = options.backend ?? openBackend(backendOptionsOf(env, {
    name: 'tracking-normalizer', clickhouseDatabase: options.database, ...(options.redisNamespace ? { namespace: options.redisNamespace } : {}),
    log: (level, message) => appLog.to?.[level](message),
  }));
  const registry = backend.metrics.registry;
  const checks = backend.readiness();
  const health = createHealthServer({ logLevel: env.LOG_LEVEL, registry, checks });
  appLog.to = health.log;
  const log = health.log;
  await migrate(backend.clickhouseTarget!, { log: (line) => log.info(`migrate: ${line}`) });

  const metrics = createNormalizerMetrics(registry);
  const clickhouse = backend.clickhouse()!;
  const writer = new ClickHouseWriter(clickhouse, { ...NORMALIZER_WRITER_OPTIONS, logger: log, onFlush: (report) => metrics.flushed(report) });
  const { places, workdays } = backend.predictionInputs();
  const kafka = backend.kafka();
  const consumer = new NormalizerConsumer({
    // Closed shipments also become lane_closures rows, written after the rows they come from.
    // Delivered shipments also become prediction_observations rows (the delivery model's input).
    kafka,
    sink: new LaneClosureSink(new PredictionObservationSink(writer, clickhouse, places, workdays), clickhouse),
    rules: product.rules, groupId: options.groupId, topic: options.topic, metrics,
    resolveCarrier: (name) => product.registry.resolve(name),
    log: (level, message, details) => log[level](details ?? {}, message),
  });
  await consumer.start();
  checks.push({ name: 'consumer', check: async () => { if (!consumer.isHealthy()) throw new Error('the raw-poll consumer is not running'); } });
  checks.push({ name: 'writer', check: async () => { if (!(await writer.ping())) throw new Error('ClickHouse does not take rows'); } });

  // Push: with Redis (where watches live), changes of watched shipments become webhook events
  // on Kafka. A consumer group of its own, so detection and the ClickHouse writer never wait on each other.
  let stopPush = async () => {};
  if (backend.kind === 'redis') {
    await ensureWebhookTopic(kafka);
    const detector = new ChangeDetector({
      kv: backend.kv('push'), events: backend.pushEvents()!, lanes: backend.lanes(product).stats,
      // eta_changed needs the model: the newest version the rebuild below lists.
      predictor: backend.predictions().predictor,
      // Keys' standings come from the access store beside the watches: a paused key's watch makes no event.
      standing: standingFromStore(backend.access(product.config.plans)), clock: Date.now,
    });
    const changes = new PollChangeConsumer({
      kafka, detector, rules: product.rules, resolveCarrier: (name) => product.registry.resolve(name), groupId: options.pushGroupId, topic: options.topic,
      fromLatest: options.fromLatest,
      log: (level, message) => log[level](message),
    });
    await changes.start();
    // Outboxes a crash left behind are handed over within seconds, not only at the shipment's next poll.
    const sweep = setInterval(() => { detector.sweep().catch((err: unknown) => log.warn({ err }, 'push outbox sweep failed')); }, 10_000);
    stopPush = async () => {
      clearInterval(sweep);
      await changes.stop();
      await detector.settled();
    };
  } else {
    log.warn('REDIS_URL is not set: push change detection is off in this normalizer');
  }

  const refreshLanes = async () => {
    try {
      // Recomputes only the lanes touched or slid since the last refresh (lib/clickhouse/README.md).
      await refreshLaneStats(clickhouse, { windowDays: laneWindowDays, nowMs: options.laneClock?.() });
    } catch (err) {
      log.warn({ err }, 'lane benchmark refresh failed; the next run retries');
    }
  };
  // The delivery model: rebuilt in ClickHouse every PREDICTION_REBUILD_SECONDS (at most 600: the
  // contract's "at least every 10 minutes"), the first at once; one at a time.
  let rebuilding: Promise<void> | null = null;
  // Its own client: a rebuild over millions of observations outlasts the 30 s request timeout of row writes.
  const rebuildClient = backend.clickhouseForRebuilds()!;
  const rebuildPrediction = (): Promise<void> => {
    rebuilding ??= rebuildPredictionModel(rebuildClient, { windowDays: laneWindowDays })
      .then((r) => { log.info({ version: r.version, cells: r.cells, shipments: r.shipments, duration_ms: r.durationMs }, 'delivery model rebuilt'); })
      .catch((err: unknown) => { log.warn({ err }, 'delivery model rebuild failed; the next run retries'); })
      .finally(() => { rebuilding = null; });
    return rebuilding;
  };
  void rebuildPrediction();
  const predictionTimer = setInterval(() => { void rebuildPrediction(); }, env.PREDICTION_REBUILD_SECONDS * 1000);
  predictionTimer.unref();
  const laneJob = cron.schedule(options.laneRefreshCron ?? '* * * * *', () => { void refreshLanes(); });

  if (options.healthPort !== null) await health.listen({ port: options.healthPort ?? env.PORT, host: env.HOST });

  const steps = new StopSteps();
  return {
    consumer, writer, clickhouse, health, refreshLanes, rebuildPrediction,
    stopStep: () => steps.underWay(),
    async stop() {
      await steps.step('the health server', () => health.close());
      await steps.step('push change detection', () => stopPush());
      await steps.step('the Kafka consumer', () => consumer.stop());
      await steps.step('the lane refresh job', () => laneJob.stop());
      await steps.step('the delivery model rebuild', async () => { clearInterval(predictionTimer); await rebuilding; });
      try {
        // What is still queued belongs to batches the consumer left uncommitted: Kafka hands those
        // polls to the group's next member, so they are dropped here, not inserted; only the
        // insert under way is waited for.
        await steps.step('the ClickHouse writer (the insert under way)', () => writer.abandon());
      } finally {
        if (!options.backend) await steps.step('the backend (stores, ClickHouse and Redis clients)', () => backend.close());
      }
    },
  };
}
