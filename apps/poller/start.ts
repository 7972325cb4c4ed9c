import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { standingFromStore, type AccessStore } from '../../lib/access/index.ts';
import { backendOptionsOf, openBackend, type Backend } from '../../lib/backend/index.ts';
import { createCarrierPoller } from '../../lib/carriers/poll.ts';
import type { Env } from '../../lib/config/index.ts';
import { createPollerMetrics } from '../../lib/metrics/index.ts';
import { createMailer, noticeSettingsOf, scheduleNotices } from '../../lib/notices/index.ts';
import { refreshPolicyOf, startRefreshTicks, type RefreshPolicy, type RefreshTotals } from '../../lib/poller/index.ts';
import { createHealthServer } from '../../lib/process/health.ts';
import { StopSteps } from '../../lib/process/run.ts';
import { WatchStore } from '../../lib/push/index.ts';
import { loadProduct } from '../../lib/product/index.ts';
import { TrackingService } from '../../lib/tracking/index.ts';

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
  /** The process's backend (the combined start shares one); default: one opened from `env`, owned and closed by the poller. */
  backend?: Backend;
  /** For the backend the poller opens: the ClickHouse database and the Redis namespace (tests use their own). */
  database?: string;
  redisNamespace?: string;
  policy?: RefreshPolicy;
  healthPort?: number | null;
  /** Also run the plan-expiry notice job (default true). */
  notices?: boolean;
  sandboxUrl?: string | null;
  /** Where live keys' shipments are polled: the real carriers (default) or the sandbox (npm start). */
  liveTarget?: 'carriers' | 'sandbox';
  /** Cron of the ticks (default from the policy's tick); null: no schedule, ticks only through tick() (tests). */
  tickCron?: string | null;
}

/**
 * The poller app: every tick re-polls its share of the non-terminal shipments seen in the last
 * 30 days (from ClickHouse `shipments`) and the watched ones, within per-carrier limits, publishing
 * `source: poller` polls to Kafka and refreshing the cache; customers' lookups are never consumed.
 * It also runs the plan-expiry notices.
 */
export async function startPoller(env: Env, options: PollerStartOptions = {}): Promise<PollerApp> {
  if (!env.KAFKA_BROKERS || !env.CLICKHOUSE_URL || !env.REDIS_URL) throw new Error('the poller needs KAFKA_BROKERS, CLICKHOUSE_URL and REDIS_URL');
  const policy = options.policy ?? refreshPolicyOf(env.POLLER_INTERVAL_SECONDS);
  const product = loadProduct(env.CONFIG_DIR);
  // The backend's parts (Kafka's client above all) log through this app's logger, made just below.
  const appLog: { to: FastifyBaseLogger | null } = { to: null };
  const backend = options.backend ?? openBackend(backendOptionsOf(env, {
    name: 'tracking-poller', clickhouseDatabase: options.database, ...(options.redisNamespace ? { namespace: options.redisNamespace } : {}),
    log: (level, message) => appLog.to?.[level](message),
  }));
  const metrics = backend.metrics;
  const checks = backend.readiness();
  const health = createHealthServer({ logLevel: env.LOG_LEVEL, registry: metrics.registry, checks });
  appLog.to = health.log;
  const log = health.log;
  const carriers = createCarrierPoller({ sandboxUrl: options.sandboxUrl ?? env.SANDBOX_URL ?? null, liveTarget: options.liveTarget ?? 'carriers' });
  const tracking = new TrackingService({
    cache: backend.cache({ maxBytes: env.CACHE_MAX_BYTES, onError: (err) => log.warn({ err }, 'cache write failed') }),
    carriers, bus: await backend.bus(product), rules: product.rules, lanes: backend.lanes(product).stats, metrics, clock: Date.now,
  });
  const access = backend.access(product.config.plans);
  // Watched shipments (push) are re-polled like active ones, even before their first scan; a watch of a
  // key that is not active (suspended, revoked, past its period) costs no carrier poll.
  const watches = new WatchStore(backend.kv('push'));
  const standing = standingFromStore(access);
  const ticks = startRefreshTicks({
    policy, clock: Date.now, metrics: createPollerMetrics(metrics.registry), cron: options.tickCron,
    active: (sinceMs) => backend.activeShipments(sinceMs),
    watched: (nowMs) => watches.pollable(nowMs, standing),
    refresh: (s) => tracking.refresh(s.carrier, s.awb, s.mode),
    log: { totals: (totals) => log.info(totals, 'poller: refreshed shipments'), failed: (err) => log.error({ err }, 'poller tick failed') },
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
  if (options.healthPort !== null) await health.listen({ port: options.healthPort ?? env.PORT, host: env.HOST });

  const steps = new StopSteps();
  return {
    tick: ticks.tick, tracking, access, health,
    stopStep: () => steps.underWay(),
    async stop() {
      await steps.step('the health server', () => health.close());
      await steps.step('the ticks (polls in flight finish, no new one starts)', () => ticks.stop());
      await steps.step('the plan notices', () => stopNotices());
      closeMailer();
      await steps.step('the carrier clients', () => carriers.close());
      if (!options.backend) await steps.step('the backend (raw-poll producer, stores, connections)', () => backend.close());
    },
  };
}
