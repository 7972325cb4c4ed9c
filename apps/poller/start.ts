import Fastify, { LogController, type FastifyInstance } from 'fastify';
import cron from 'node-cron';
import { openAccessStore, type AccessStore } from '../../lib/access/index.ts';
import { createRedisCache } from '../../lib/cache/index.ts';
import { createCarrierPoller } from '../../lib/carriers/poll.ts';
import { ClickHouseLaneSource, activeShipments, createClickHouseClient, pingClickHouse, resolveTarget } from '../../lib/clickhouse/index.ts';
import type { Env } from '../../lib/config/index.ts';
import { createKafka } from '../../lib/kafka/client.ts';
import { KafkaBus } from '../../lib/kafka/kafka-bus.ts';
import type { PollBus } from '../../lib/bus/index.ts';
import { countProbesOf, createMetrics, createPollerMetrics } from '../../lib/metrics/index.ts';
import { createMailer, noticeSettingsOf, scheduleNotices } from '../../lib/notices/index.ts';
import {
  cronOfTick, mergeCandidates, refreshPolicyOf, refreshShipments, shipmentsDue, type RefreshPolicy, type RefreshTotals,
} from '../../lib/poller/index.ts';
import { RedisKv } from '../../lib/kv/index.ts';
import { WatchStore } from '../../lib/push/index.ts';
import { loadProduct } from '../../lib/product/index.ts';
import { connectRedis } from '../../lib/redis/index.ts';
import { StopSteps } from '../../lib/process/run.ts';
import { TrackingService } from '../../lib/tracking/index.ts';
import { RedisAccessStore, standingFromStore } from '../../lib/access/index.ts';

export interface PollerApp {
  /** One refresh round now (what each tick runs). */
  tick(): Promise<RefreshTotals>;
  tracking: TrackingService;
  access: AccessStore;
  health: FastifyInstance;
  stop(): Promise<void>;
  stopStep(): string | null;
}

export interface PollerStartOptions {
  database?: string;
  policy?: RefreshPolicy;
  healthPort?: number | null;
  /** Also run the plan-expiry notice job (default true). */
  notices?: boolean;
  sandboxUrl?: string | null;
  /** Prefix of the Redis keys (default `trk:`, as the API's); tests use their own. */
  redisNamespace?: string;
  /** Where live keys' shipments are polled: the real carriers (default) or the sandbox (npm start). */
  liveTarget?: 'carriers' | 'sandbox';
  /** Cron of the ticks (default from the policy's tick); null: no schedule, ticks only through tick() (tests). */
  tickCron?: string | null;
  /** The process's raw-poll bus when another app of it already has one (npm start); default: its own. */
  bus?: PollBus;
}

/**
 * The poller app: every tick re-polls its share of the non-terminal shipments seen in the last
 * 30 days (from ClickHouse `shipments`), within per-carrier limits, publishing `source: poller`
 * polls to Kafka and refreshing the Redis cache; customers' lookups are never consumed. It also
 * runs the plan-expiry notices.
 */
export async function startPoller(env: Env, options: PollerStartOptions = {}): Promise<PollerApp> {
  if (!env.KAFKA_BROKERS || !env.CLICKHOUSE_URL || !env.REDIS_URL) throw new Error('the poller needs KAFKA_BROKERS, CLICKHOUSE_URL and REDIS_URL');
  const policy = options.policy ?? refreshPolicyOf(env.POLLER_INTERVAL_SECONDS);
  const product = loadProduct(env.CONFIG_DIR);
  // Probes only: counted (http_probe_requests_total), not logged per request.
  const health = Fastify({ logger: { level: env.LOG_LEVEL }, logController: new LogController({ disableRequestLogging: true }) });
  const log = health.log;
  const clickhouse = createClickHouseClient(resolveTarget(env.CLICKHOUSE_URL, options.database));
  const redis = connectRedis(env.REDIS_URL, { maxRetriesPerRequest: 2 }, (level, message) => log[level](message));
  // One raw-poll producer per process: the one-process start hands its API's bus in (two buses
  // would be two spools and two producers for one process's polls).
  const bus = options.bus ?? await KafkaBus.open({
    kafka: createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tracking-poller', log: (level, message) => log[level](message) }),
    dataDir: env.DATA_DIR,
    onError: (err) => log.warn({ err }, 'raw-poll log unavailable; spooling'),
    onRecovered: (ms) => log.info(`raw-poll log back after ${Math.round(ms / 1000)} s: sending the spool`),
  });
  const ownsBus = options.bus === undefined;
  const carriers = createCarrierPoller({ sandboxUrl: options.sandboxUrl ?? env.SANDBOX_URL ?? null, liveTarget: options.liveTarget ?? 'carriers' });
  // Watched shipments (push) are re-polled like active ones, even before their first scan.
  const watches = new WatchStore(new RedisKv(redis, `${options.redisNamespace ?? 'trk:'}push:`));
  // A watch of a key that is not active (suspended, revoked, past its period) costs no carrier poll.
  const standing = standingFromStore(new RedisAccessStore({ plans: product.config.plans, redis, namespace: `${options.redisNamespace ?? 'trk:'}access:` }));
  // Carrier poll latency and errors (lib/metrics), the poller's polls by outcome and its ticks, and
  // the process's own metrics, on /metrics.
  const metrics = createMetrics();
  const pollerMetrics = createPollerMetrics(metrics.registry);
  const tracking = new TrackingService({
    cache: createRedisCache(redis), carriers, bus, rules: product.rules,
    lanes: new ClickHouseLaneSource(clickhouse), metrics, clock: Date.now,
  });

  let running: Promise<RefreshTotals> | null = null;
  // Aborted at stop: the tick in progress starts no further poll (lib/poller/run.ts).
  const stopping = new AbortController();
  const tick = () => {
    running ??= (async () => {
      const now = Date.now();
      const candidates = mergeCandidates(await activeShipments(clickhouse, now - policy.lookbackMs), await watches.pollable(now, standing));
      const due = shipmentsDue(candidates, now, policy);
      const totals = await refreshShipments(due, async (s) => {
        const outcome = await tracking.refresh(s.carrier, s.awb, s.mode).catch(() => 'error' as const);
        pollerMetrics.poll(s.carrier, outcome);
        return outcome;
      }, undefined, stopping.signal);
      if (totals.polled) log.info(totals, 'poller: refreshed shipments');
      pollerMetrics.tick(due.length, false);
      return totals;
    })().catch((err: unknown) => {
      pollerMetrics.tick(0, true);
      throw err;
    }).finally(() => { running = null; });
    return running;
  };
  const tickCron = options.tickCron === undefined ? cronOfTick(policy.tickMs) : options.tickCron;
  const task = tickCron === null ? null : cron.schedule(tickCron, () => { tick().catch((err: unknown) => log.error({ err }, 'poller tick failed')); });

  const access = openAccessStore({
    plans: product.config.plans, redisUrl: env.REDIS_URL, redisNamespace: `${options.redisNamespace ?? 'trk:'}access:`, dataDir: env.DATA_DIR,
  });
  let stopNotices = async () => {};
  let closeMailer = () => {};
  if (options.notices !== false) {
    const settings = noticeSettingsOf(env);
    const mailer = createMailer(env, { from: settings.from });
    closeMailer = () => mailer.close();
    stopNotices = scheduleNotices({
      access, mailer, clock: Date.now, cron: settings.cron,
      log: { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) },
      content: { paymentBaseUrl: settings.paymentBaseUrl, plans: product.config.plans },
    });
  }

  countProbesOf(health, metrics.registry);
  health.get('/healthz', async () => ({ status: 'ok' }));
  // Ready when the engines a tick needs answer: Redis (cache, watches) and ClickHouse (shipments).
  health.get('/readyz', async (_request, reply) => {
    const [redisUp, clickhouseUp] = await Promise.all([
      redis.ping().then(() => true, () => false),
      pingClickHouse(clickhouse),
    ]);
    const ready = redisUp && clickhouseUp;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', redis: redisUp, clickhouse: clickhouseUp });
  });
  health.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
  if (options.healthPort !== null) await health.listen({ port: options.healthPort ?? env.PORT, host: env.HOST });

  const steps = new StopSteps();
  return {
    tick, tracking, access, health,
    stopStep: () => steps.underWay(),
    async stop() {
      await steps.step('the health server', () => health.close());
      await steps.step('the tick schedule', () => task?.stop());
      stopping.abort();
      await steps.step('the polls in flight of the tick under way', () => running?.catch(() => undefined));
      await steps.step('the plan notices', () => stopNotices());
      closeMailer();
      if (ownsBus) await steps.step('the raw-poll producer (Kafka or spool)', () => bus.close());
      await steps.step('the carrier clients', () => carriers.close());
      await steps.step('the access store', () => access.close());
      redis.disconnect();
      await steps.step('the ClickHouse client', () => clickhouse.close());
    },
  };
}
