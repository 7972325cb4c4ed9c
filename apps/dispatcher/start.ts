import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { openAccessStore, standingFromStore } from '../../lib/access/index.ts';
import { createClickHouseClient, migrate, resolveTarget, type ClickHouseClient } from '../../lib/clickhouse/index.ts';
import type { Env } from '../../lib/config/index.ts';
import { createKafka } from '../../lib/kafka/client.ts';
import { createMailer } from '../../lib/notices/index.ts';
import { loadProduct } from '../../lib/product/index.ts';
import { StopSteps } from '../../lib/process/run.ts';
import { connectRedis } from '../../lib/redis/index.ts';
import { RedisKv } from '../../lib/kv/index.ts';
import { countProbesOf } from '../../lib/metrics/index.ts';
import {
  AttemptRowOutbox, DeliveryWriter, Dispatcher, EndpointStore, WebhookEventConsumer, endpointDisabledMessage, ensureWebhookTopic, parseAllowedTargets,
  parseRetrySchedule,
} from '../../lib/push/index.ts';
import { WebhookSender, type WebhookSenderOptions } from '../../lib/push/sender.ts';

export interface DispatcherApp {
  dispatcher: Dispatcher;
  health: FastifyInstance;
  stop(): Promise<void>;
  stopStep(): string | null;
}

export interface DispatcherStartOptions {
  /** ClickHouse database of webhook_deliveries (default `tracking`; tests use their own). */
  database?: string;
  /** Prefix of the Redis keys (default `trk:`, as the API's). */
  redisNamespace?: string;
  groupId?: string;
  /** A new consumer group starts at the topic's end (tests). */
  fromLatest?: boolean;
  healthPort?: number | null;
  sender?: WebhookSenderOptions;
  /** How long a claimed queue stays this instance's (default 30 s, past the 15 s attempt timeout). */
  leaseMs?: number;
  /** Attempt rows left by a dead dispatcher: when one counts as left (default 2 min) and how often to look (default 30 s). */
  attemptRows?: { orphanAfterMs?: number; everyMs?: number };
}

/**
 * The webhook dispatcher app: events from Kafka into the durable queues in Redis, deliveries with
 * leases (any number of instances share the work), every attempt a row of ClickHouse
 * webhook_deliveries. Stops in order: health → intake → deliveries in flight → writer → clients.
 */
export async function startDispatcher(env: Env, options: DispatcherStartOptions = {}): Promise<DispatcherApp> {
  if (!env.KAFKA_BROKERS || !env.REDIS_URL) throw new Error('the dispatcher needs KAFKA_BROKERS and REDIS_URL (CLICKHOUSE_URL for webhook_deliveries)');
  const product = loadProduct(env.CONFIG_DIR);
  // Probes only: counted (http_probe_requests_total), not logged per request.
  const health = Fastify({ logger: { level: env.LOG_LEVEL }, logController: new LogController({ disableRequestLogging: true }) });
  const log = (level: 'info' | 'warn' | 'error', message: string) => health.log[level](message);
  const redis = connectRedis(env.REDIS_URL, { maxRetriesPerRequest: 2, enableAutoPipelining: true }, (level, message) => health.log[level](message));
  const kv = new RedisKv(redis, `${options.redisNamespace ?? 'trk:'}push:`);
  const access = openAccessStore({
    plans: product.config.plans, redisUrl: env.REDIS_URL, redisNamespace: `${options.redisNamespace ?? 'trk:'}access:`, dataDir: env.DATA_DIR,
  });
  const mailer = createMailer(env);

  let clickhouse: ClickHouseClient | null = null;
  let writer: DeliveryWriter | null = null;
  if (env.CLICKHOUSE_URL) {
    const target = resolveTarget(env.CLICKHOUSE_URL, options.database);
    await migrate(target, { log: (line) => log('info', `migrate: ${line}`) });
    clickhouse = createClickHouseClient(target);
    writer = new DeliveryWriter(clickhouse, { log });
  }
  // With ClickHouse: every attempt's row is kept in Redis from before the send until written, and
  // rows a killed dispatcher left behind are written by the reconciler (at start, then every 30 s).
  const outbox = writer ? new AttemptRowOutbox(kv, { orphanAfterMs: options.attemptRows?.orphanAfterMs }) : null;
  // Once ClickHouse has a row it leaves Redis (a failed clean-up only means the row is written again).
  const confirmed = (member: string) => () => { void outbox?.written(member).catch(() => {}); };
  const reconcile = async () => {
    if (!outbox || !writer) return;
    for (const { member, row } of await outbox.orphans()) writer.write(row, confirmed(member));
  };
  const reconciling = setInterval(() => {
    reconcile().catch((err: unknown) => log('warn', `attempt rows: ${(err as Error).message}`));
  }, options.attemptRows?.everyMs ?? 30_000);
  reconciling.unref();
  await reconcile().catch((err: unknown) => log('warn', `attempt rows: ${(err as Error).message}`));

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const attempts = new Counter({
    name: 'webhook_delivery_attempts_total', help: 'Delivery attempts by outcome', labelNames: ['outcome'], registers: [registry],
  });
  const sender = new WebhookSender({ allowedTargets: parseAllowedTargets(env.WEBHOOK_ALLOWED_TARGETS), ...options.sender });
  const dispatcher = new Dispatcher({
    kv, endpoints: new EndpointStore(kv), sender, leaseMs: options.leaseMs, standing: standingFromStore(access),
    retrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    log,
    rows: outbox ?? undefined,
    onAttempt: (row, rowMember) => {
      const code = row.status_code;
      attempts.inc({ outcome: code === null ? 'no_answer' : code < 300 && code >= 200 ? 'success' : `http_${Math.floor(code / 100)}xx` });
      writer?.write(row, rowMember ? confirmed(rowMember) : undefined);
    },
    onDisabled: async (endpoint, reason) => {
      const key = await access.getByPrefix(endpoint.key_prefix);
      if (key) await mailer.send(endpointDisabledMessage(key.email, endpoint, reason));
    },
  });
  const kafka = createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tracking-dispatcher', log: (level, message) => health.log[level](message) });
  await ensureWebhookTopic(kafka);
  const intake = new WebhookEventConsumer({ kafka, dispatcher, groupId: options.groupId, fromLatest: options.fromLatest, log });
  await intake.start();
  dispatcher.start();

  countProbesOf(health, registry);
  health.get('/healthz', async () => ({ status: 'ok' }));
  health.get('/readyz', async (_request, reply) => {
    const ready = intake.isHealthy() && (await redis.ping().then(() => true, () => false));
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready' });
  });
  health.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  if (options.healthPort !== null) await health.listen({ port: options.healthPort ?? env.PORT, host: env.HOST });

  const steps = new StopSteps();
  return {
    dispatcher, health,
    stopStep: () => steps.underWay(),
    async stop() {
      await steps.step('the health server', () => health.close());
      await steps.step('the event intake (Kafka consumer)', () => intake.stop());
      clearInterval(reconciling);
      await steps.step('the deliveries in flight', () => dispatcher.stop());
      await steps.step('the webhook_deliveries writer', () => writer?.close().catch((err: unknown) => {
        log('warn', `webhook_deliveries rows not written at stop: ${(err as Error).message}`);
      }));
      await steps.step('the ClickHouse client', () => clickhouse?.close());
      await steps.step('the webhook sender', () => sender.close());
      mailer.close();
      await steps.step('the access store', () => access.close());
      redis.disconnect();
    },
  };
}
