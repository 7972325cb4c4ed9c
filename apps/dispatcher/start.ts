import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { standingFromStore } from '../../lib/access/index.ts';
import { backendOptionsOf, openBackend, type Backend } from '../../lib/backend/index.ts';
import { migrate } from '../../lib/clickhouse/index.ts';
import type { Env } from '../../lib/config/index.ts';
import { createMailer, noticeSettingsOf } from '../../lib/notices/index.ts';
import { BrandingStore } from '../../lib/branding/index.ts';
import { createNotices, noticesSpentMessage, type MessagingSandboxTarget, type NoticesRuntime } from '../../lib/buyer-notices/index.ts';
import { loadNoticeTemplates } from '../../lib/config/index.ts';
import { createDispatcherMetrics, createNoticeMetrics } from '../../lib/metrics/index.ts';
import { loadProduct } from '../../lib/product/index.ts';
import { createHealthServer } from '../../lib/process/health.ts';
import { StopSteps } from '../../lib/process/run.ts';
import {
  AttemptRowOutbox, DeliveryWriter, Dispatcher, EndpointStore, PageLinks, WebhookEventConsumer, endpointDisabledMessage, ensureWebhookTopic,
  parseAllowedTargets,
  parseRetrySchedule,
} from '../../lib/push/index.ts';
import { WebhookSender, type WebhookSenderOptions } from '../../lib/push/sender.ts';

export interface DispatcherApp {
  dispatcher: Dispatcher;
  notices: NoticesRuntime;
  health: FastifyInstance;
  stop(): Promise<void>;
  stopStep(): string | null;
}

export interface DispatcherStartOptions {
  /** The process's backend (the combined start shares one); default: one opened from `env`, owned and closed by the dispatcher. */
  backend?: Backend;
  /** For the backend the dispatcher opens: the ClickHouse database of webhook_deliveries and the Redis namespace (tests use their own). */
  database?: string;
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
  /**
   * Sandbox messaging providers for test keys' and trial plans' customer notices (none: those are not sent); live keys'
   * too for a channel with no real provider (the one-process start).
   */
  messagingSandbox?: MessagingSandboxTarget | null;
}

/**
 * The webhook dispatcher app: events from Kafka into the durable queues in Redis, deliveries with
 * leases (any number of instances share the work), every attempt a row of ClickHouse
 * webhook_deliveries. Stops in order: health → intake → deliveries in flight → writer → clients.
 */
export async function startDispatcher(env: Env, options: DispatcherStartOptions = {}): Promise<DispatcherApp> {
  if (!env.KAFKA_BROKERS || !env.REDIS_URL) throw new Error('the dispatcher needs KAFKA_BROKERS and REDIS_URL (CLICKHOUSE_URL for webhook_deliveries)');
  const product = loadProduct(env.CONFIG_DIR);
  // The backend's parts (Kafka's client above all) log through this app's logger, made just below.
  const appLog: { to: FastifyBaseLogger | null } = { to: null };
  const backend = options.backend ?? openBackend(backendOptionsOf(env, {
    name: 'tracking-dispatcher', clickhouseDatabase: options.database, ...(options.redisNamespace ? { namespace: options.redisNamespace } : {}),
    log: (level, message) => appLog.to?.[level](message),
  }));
  const registry = backend.metrics.registry;
  const checks = backend.readiness();
  const health = createHealthServer({ logLevel: env.LOG_LEVEL, registry, checks });
  appLog.to = health.log;
  const log = (level: 'info' | 'warn' | 'error', message: string) => health.log[level](message);
  const kv = backend.kv('push');
  const access = backend.access(product.config.plans);
  const mailer = createMailer(env);

  const clickhouse = backend.clickhouse();
  let writer: DeliveryWriter | null = null;
  if (clickhouse) {
    await migrate(backend.clickhouseTarget!, { log: (line) => log('info', `migrate: ${line}`) });
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

  const attempts = createDispatcherMetrics(registry);
  const sender = new WebhookSender({ allowedTargets: parseAllowedTargets(env.WEBHOOK_ALLOWED_TARGETS), ...options.sender });
  const dispatcher = new Dispatcher({
    kv, endpoints: new EndpointStore(kv), sender, leaseMs: options.leaseMs, standing: standingFromStore(access),
    retrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    log,
    rows: outbox ?? undefined,
    onAttempt: (row, rowMember) => {
      attempts.attempt(row.status_code);
      writer?.write(row, rowMember ? confirmed(rowMember) : undefined);
    },
    onDisabled: async (endpoint, reason) => {
      const key = await access.getByPrefix(endpoint.key_prefix);
      if (key) await mailer.send(endpointDisabledMessage(key.email, endpoint, reason));
    },
  });
  // Customer notices ride on the same events: made and sent here, with the contacts sealed beside the watches.
  const notices = createNotices({
    env, kv, access, plans: product.config.plans, templates: loadNoticeTemplates(env.CONFIG_DIR), branding: new BrandingStore(backend.kv('branding')),
    pages: new PageLinks(kv), carrierNameOf: (slug) => product.config.carriers.find((c) => c.slug === slug)?.name ?? slug,
    baseUrl: () => env.PUBLIC_BASE_URL ?? `http://${env.HOST}:${env.PORT}`,
    sandbox: options.messagingSandbox ?? null, liveFallsBackToSandbox: Boolean(options.messagingSandbox), from: noticeSettingsOf(env).from,
    onAllowanceSpent: async (key) => { await mailer.send(noticesSpentMessage(key, product.config.plans[key.plan].notices)); },
    metrics: createNoticeMetrics(registry),
    log,
  });
  const kafka = backend.kafka();
  await ensureWebhookTopic(kafka);
  const intake = new WebhookEventConsumer({ kafka, dispatcher, notices: notices.notices, groupId: options.groupId, fromLatest: options.fromLatest, log });
  await intake.start();
  dispatcher.start();
  notices.notices.start();

  checks.push({ name: 'intake', check: async () => { if (!intake.isHealthy()) throw new Error('the webhook event consumer is not running'); } });
  if (options.healthPort !== null) await health.listen({ port: options.healthPort ?? env.PORT, host: env.HOST });

  const steps = new StopSteps();
  return {
    dispatcher, health, notices,
    stopStep: () => steps.underWay(),
    async stop() {
      await steps.step('the health server', () => health.close());
      await steps.step('the event intake (Kafka consumer)', () => intake.stop());
      clearInterval(reconciling);
      await steps.step('the deliveries in flight', () => dispatcher.stop());
      await steps.step('the customer notices in flight', () => notices.close());
      await steps.step('the webhook_deliveries writer', () => writer?.close().catch((err: unknown) => {
        log('warn', `webhook_deliveries rows not written at stop: ${(err as Error).message}`);
      }));
      await steps.step('the webhook sender', () => sender.close());
      mailer.close();
      if (!options.backend) await steps.step('the backend (stores, ClickHouse and Redis clients)', () => backend.close());
    },
  };
}
