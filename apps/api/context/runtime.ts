import { resolve } from 'node:path';
import { standingFromStore, standingOf } from '../../../lib/access/index.ts';
import { Analyzer } from '../../../lib/analyzer/index.ts';
import { writeAnalysisShipments } from '../../../lib/analyzer/clickhouse-rows.ts';
import { openBackend } from '../../../lib/backend/index.ts';
import { createInProcessBus, type PollBus } from '../../../lib/bus/index.ts';
import {
  ClickHouseLaneSource, ClickHouseLaneWindowSource, ClickHousePredictionSource, createClickHouseClient, pingClickHouse, resolveTarget,
} from '../../../lib/clickhouse/index.ts';
import { createKafka } from '../../../lib/kafka/client.ts';
import { KafkaBus } from '../../../lib/kafka/kafka-bus.ts';
import { createCarrierPoller } from '../../../lib/carriers/poll.ts';
import { adminTokenOf, type Env } from '../../../lib/config/index.ts';
import { LaneBook, type LaneStatsSource, type LaneWindowSource } from '../../../lib/lanes/index.ts';
import { createMetrics } from '../../../lib/metrics/index.ts';
import { kafkaCheck, registerReadinessMetrics } from '../../../lib/readiness/index.ts';
import { ShipmentIndex } from '../../../lib/pipeline/shipment-index.ts';
import { loadCalendar } from '../../../lib/calendar/index.ts';
import { loadPlaces } from '../../../lib/places/index.ts';
import { placeLookupOf, PredictionBook, WorkdayIndex, type Predictor } from '../../../lib/prediction/index.ts';
import { loadProduct } from '../../../lib/product/index.ts';
import { PollLog } from '../../../lib/store/poll-log.ts';
import { TrackingService } from '../../../lib/tracking/index.ts';
import { createMailer, noticeSettingsOf } from '../../../lib/notices/index.ts';
import { Billing, ClickHousePaymentReport, RazorpayGateway, type PaymentGateway } from '../../../lib/billing/index.ts';
import { KafkaEventLog, createPush, endpointDisabledMessage, parseAllowedTargets, parseRetrySchedule, type Push } from '../../../lib/push/index.ts';
import { WebhookSender } from '../../../lib/push/sender.ts';
import type { ApiDeps, ReadinessCheck } from './deps.ts';

/** TRUST_PROXY: "true" or a comma-separated list of proxy addresses/ranges; unset trusts none. */
function trustProxyOf(value: string | undefined): boolean | string {
  if (value === undefined || value === '' || value === 'false') return false;
  return value === 'true' ? true : value;
}

export interface RuntimeOptions {
  /** Base URL of the sandbox carrier network (trk_test_ keys; every key in the embedded default). */
  sandboxUrl: string | null;
  /** The embedded default points live keys at the sandbox too: no real carrier is reachable here. */
  liveTarget: 'carriers' | 'sandbox';
  clock?: () => number;
  /**
   * Prefix of every Redis key of the access store and the cache when REDIS_URL is set; default
   * `trk:`. Tests set their own so runs sharing one Redis never see (or delete) each other's keys.
   */
  redisNamespace?: string;
  /**
   * ClickHouse database of the lane benchmarks when CLICKHOUSE_URL is set; default: a path in the
   * URL, else `tracking` (see resolveTarget). Tests point the API at a database of their own.
   */
  clickhouseDatabase?: string;
  /** Options of the webhook sender (tests shorten the timeout). */
  webhookSender?: ConstructorParameters<typeof WebhookSender>[0];
  /**
   * A sandbox payment gateway (lib/sandbox/gateway.ts): test keys pay there, and live keys too when
   * `liveTarget` is the sandbox and Razorpay is not configured (the embedded default).
   */
  paymentSandbox?: { url: string; keyId: string; keySecret: string; webhookSecret: string } | null;
}

/** Razorpay when its three variables are set, else null. */
function razorpayOf(env: Env): PaymentGateway | null {
  if (!env.RAZORPAY_KEY_ID || !env.RAZORPAY_KEY_SECRET || !env.RAZORPAY_WEBHOOK_SECRET) return null;
  return new RazorpayGateway({
    apiUrl: env.RAZORPAY_API_URL, keyId: env.RAZORPAY_KEY_ID, keySecret: env.RAZORPAY_KEY_SECRET, webhookSecret: env.RAZORPAY_WEBHOOK_SECRET,
  });
}

/** The API's dependencies plus what owns them: the pieces an app starts, and closes in order. */
export interface ApiRuntime {
  deps: ApiDeps;
  /** Present in the embedded default: the in-process normalizer's view of every shipment. */
  shipments: ShipmentIndex | null;
  bus: PollBus;
  /** Watches, endpoints, change detection and (embedded) delivery. */
  push: Push;
  /** The delivery model's book (insights.prediction, /v1/estimate, eta_changed); tests rebuild it at once. */
  predictions: PredictionBook;
  /** True when ADMIN_TOKEN was not set and this start generated one (the first start on DATA_DIR). */
  adminTokenGenerated: boolean;
  /** Where the generated token is kept (DATA_DIR/admin-token), or null when ADMIN_TOKEN is set. */
  adminTokenFile: string | null;
  close(): Promise<void>;
}

/**
 * Wires the API from the environment: Redis (keys, limits, cache) when REDIS_URL is set, else the
 * embedded store under DATA_DIR and an in-process cache; the in-process bus and normalizer until
 * the Kafka pipeline is configured.
 */
export async function createApiRuntime(env: Env, options: RuntimeOptions): Promise<ApiRuntime> {
  const clock = options.clock ?? Date.now;
  const product = loadProduct(resolve(env.CONFIG_DIR));
  const metrics = createMetrics();
  const dataDir = resolve(env.DATA_DIR);
  // Keys, limits, the cache, Idempotency-Key answers, payments, push's and the analyzer's state: all
  // in one Redis (or Redis Cluster) when REDIS_URL is set, else under DATA_DIR (lib/backend).
  const backend = openBackend({ redisUrl: env.REDIS_URL, namespace: options.redisNamespace ?? 'trk:', dataDir, clock });
  const access = backend.access(product.config.plans);
  const throttle = backend.throttle();
  const cache = backend.cache({
    maxBytes: env.CACHE_MAX_BYTES,
    onError: (err) => console.error('a delivered record could not be written under DATA_DIR/records:', (err as Error).message),
  });
  const idempotency = backend.idempotency();
  const carriers = createCarrierPoller({ sandboxUrl: options.sandboxUrl, liveTarget: options.liveTarget, clock });

  const laneWindowDays = env.LANE_WINDOW_DAYS;
  const embeddedLanes = new LaneBook({ windowDays: laneWindowDays, clock });
  // The window slides in the background, never in a lookup (lib/lanes/book.ts).
  const stopSweepingLanes = embeddedLanes.startSweeping();
  // The delivery model: learned from the delivered shipments the embedded normalizer sees.
  const predictionPlaces = placeLookupOf(loadPlaces());
  const predictionWorkdays = new WorkdayIndex(loadCalendar());
  const predictions = new PredictionBook({ places: predictionPlaces, workdays: predictionWorkdays, windowDays: laneWindowDays, clock });
  const clickhouse = env.CLICKHOUSE_URL ? createClickHouseClient(resolveTarget(env.CLICKHOUSE_URL, options.clickhouseDatabase)) : null;
  // Distributed: the normalizer rebuilds the model in ClickHouse; this process holds its newest
  // version in memory. Without ClickHouse there is no model there (predictions are null).
  const clickhousePredictions = env.KAFKA_BROKERS && clickhouse
    ? new ClickHousePredictionSource(clickhouse, {
      places: predictionPlaces,
      workdays: predictionWorkdays,
      log: (message, err, level) => (level === 'info' ? console.log(message) : console.error(message, (err as Error).message)),
    })
    : null;
  const predictor: Predictor = clickhousePredictions?.predictor ?? predictions.predictor;
  // Push state: Redis when set, else a journal under DATA_DIR. Events go to Kafka when it is set
  // (the dispatcher app delivers them), else straight to this process's dispatcher.
  const mailer = createMailer(env, { from: noticeSettingsOf(env).from });
  const pushLanes: { source: LaneStatsSource } = { source: embeddedLanes };
  // The tracking service is made below (it needs the bus); push reads current records through it.
  const pushRecords: { tracking: TrackingService | null } = { tracking: null };
  const allowedTargets = parseAllowedTargets(env.WEBHOOK_ALLOWED_TARGETS);
  const push = createPush({
    kv: backend.kv('push'),
    standing: standingFromStore(access),
    currentRecord: async (carrier, awb, mode) => pushRecords.tracking?.peekShipment(carrier, awb, mode) ?? null,
    lanes: { get: (lane) => pushLanes.source.get(lane) },
    predictor,
    events: env.KAFKA_BROKERS ? new KafkaEventLog(createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tracking-api-push' })) : undefined,
    sender: new WebhookSender({ allowedTargets, ...options.webhookSender }),
    targets: { allowedTargets, lookup: options.webhookSender?.lookup },
    clock,
    retrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    log: (level, message) => console[level === 'info' ? 'log' : level](message),
    onDisabled: async (endpoint, reason) => {
      const key = await access.getByPrefix(endpoint.key_prefix);
      if (key) await mailer.send(endpointDisabledMessage(key.email, endpoint, reason));
    },
  });
  if (!env.KAFKA_BROKERS) push.dispatcher.start();

  // Distributed: polls go to Kafka and lane benchmarks come from ClickHouse. Otherwise the
  // embedded pipeline: every poll is logged under DATA_DIR and normalized in process.
  let bus: PollBus;
  let shipments: ShipmentIndex | null = null;
  let log: PollLog | null = null;
  if (env.KAFKA_BROKERS) {
    const kafka = createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tracking-api' });
    bus = await KafkaBus.open({
      kafka, dataDir,
      onError: (err) => console.error(`raw-poll log unavailable, spooling to ${dataDir}/spool:`, (err as Error).message),
      onRecovered: (ms) => console.log(`raw-poll log back after ${Math.round(ms / 1000)} s: sending the spool`),
    });
  } else {
    const inProcess = createInProcessBus((err) => console.error('normalizer failed on a poll:', err));
    const index = new ShipmentIndex(product.rules, embeddedLanes, predictions);
    const pollLog = new PollLog(dataDir);
    for await (const { poll, mode } of pollLog.read((line) => console.error(`skipped damaged line ${line} of ${dataDir}/polls.ndjson`))) {
      index.handle(poll, mode);
    }
    inProcess.subscribe(async (poll, mode) => {
      pollLog.append({ poll, mode });
      const result = index.handle(poll, mode);
      // Push: a change of a watched shipment becomes an event, queued durably before this returns.
      await push.detector.handle(poll, mode, result);
    });
    bus = inProcess;
    shipments = index;
    log = pollLog;
  }
  const laneSource: LaneStatsSource = clickhouse
    ? new ClickHouseLaneSource(clickhouse, { ttlMs: env.LANE_CACHE_TTL_MS })
    : embeddedLanes;
  const laneWindows: LaneWindowSource = clickhouse
    ? new ClickHouseLaneWindowSource(clickhouse, {
      carriers: product.registry.list().map((c) => c.slug), windowDays: laneWindowDays, ttlMs: env.LANE_CACHE_TTL_MS,
    })
    : embeddedLanes;

  // Payments beside the keys; settled ones also in ClickHouse's payments table when it is set.
  const sandboxGateway = options.paymentSandbox
    ? new RazorpayGateway({
      apiUrl: options.paymentSandbox.url,
      keyId: options.paymentSandbox.keyId,
      keySecret: options.paymentSandbox.keySecret,
      webhookSecret: options.paymentSandbox.webhookSecret,
    }, 'sandbox', [new URL(options.paymentSandbox.url).origin])
    : null;
  const billing = new Billing({
    access, plans: product.config.plans, mailer, clock,
    payments: backend.payments(),
    live: razorpayOf(env) ?? (options.liveTarget === 'sandbox' ? sandboxGateway : null),
    test: sandboxGateway,
    report: clickhouse ? new ClickHousePaymentReport(clickhouse) : null,
    onRenewed: async (key) => {
      const standing = standingOf(key, new Date(clock()));
      await push.keyChanged(key.prefix, key.mode, standing);
      // Held analyses go on at once (the analyzer is made below; renewals come after start).
      await analyzer.keyChanged(key.prefix, standing);
    },
    log: (level, message) => console[level === 'info' ? 'log' : level](message),
  });

  if (clickhousePredictions) clickhousePredictions.start();
  else if (!env.KAFKA_BROKERS) predictions.start(env.PREDICTION_REBUILD_SECONDS * 1000);
  const tracking = new TrackingService({ cache, carriers, bus, rules: product.rules, lanes: laneSource, metrics, clock, predictor });
  pushLanes.source = laneSource;
  pushRecords.tracking = tracking;
  // The shipment analyzer: its state beside push's (Redis or DATA_DIR), its runner in every API process.
  const analyzer = new Analyzer({
    kv: push.kv, tracking, network: laneWindows, plans: product.config.plans, events: push.events, clock,
    // Revoked keys' analyses stop, suspended ones wait: the one rule push's workers ask too.
    standing: standingFromStore(access),
    runner: { retryDelaysMs: parseRetrySchedule(env.ANALYZER_RETRY_SCHEDULE, 'ANALYZER_RETRY_SCHEDULE').map((s) => s * 1000) },
    // Distributed: every shipment of a completed analysis becomes a row of analysis_shipments.
    ...(clickhouse ? { rows: (doc, shipments) => writeAnalysisShipments(clickhouse, doc, shipments) } : {}),
    log: (level, message, err) => console[level === 'info' ? 'log' : 'error'](message, err ?? ''),
  });
  analyzer.start();
  const readiness: ReadinessCheck[] = [
    { name: 'access', check: async () => { await access.getByPrefix('trk_test_0000000'); } },
    ...backend.readiness,
  ];
  if (env.KAFKA_BROKERS) readiness.push(kafkaCheck(bus, env.KAFKA_BROKERS));
  if (clickhouse) {
    readiness.push({
      name: 'clickhouse',
      degrades: true,
      // ping() answers { success: false } rather than throwing when ClickHouse is away.
      check: async () => { if (!(await pingClickHouse(clickhouse))) throw new Error('ClickHouse does not answer'); },
    });
  }
  if (options.sandboxUrl) {
    const url = options.sandboxUrl;
    readiness.push({
      name: 'carrier-sandbox',
      check: async () => {
        const res = await fetch(`${url}/healthz`);
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
      },
    });
  }

  registerReadinessMetrics(metrics.registry, readiness, bus);
  // ADMIN_TOKEN, else generated once and kept in DATA_DIR (lib/config/admin-token.ts).
  const admin = adminTokenOf(env.ADMIN_TOKEN, dataDir);
  const adminToken = admin.token;
  return {
    deps: {
      product, access, billing, idempotency, tracking, push, analyzer, throttle, mailer,
      lanes: laneWindows, estimator: clickhousePredictions?.estimator ?? predictions.estimator, metrics, adminToken, clock, readiness,
      logLevel: env.LOG_LEVEL, trustProxy: trustProxyOf(env.TRUST_PROXY), publicBaseUrl: env.PUBLIC_BASE_URL,
    },
    shipments,
    bus,
    push,
    predictions,
    adminTokenGenerated: admin.source === 'created',
    adminTokenFile: admin.file,
    async close() {
      stopSweepingLanes();
      await analyzer.stop();
      predictions.stop();
      clickhousePredictions?.stop();
      await bus.close();
      await push.close();
      mailer.close();
      await log?.flush();
      await clickhouse?.close();
      await carriers.close();
      await cache.close();
      await billing.close();
      await access.close();
      await idempotency.close();
      await throttle.close();
      await backend.close();
    },
  };
}
