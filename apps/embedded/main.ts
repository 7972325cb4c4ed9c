/**
 * npm start. With no service URLs, the embedded default: one process with the API, the sandbox
 * carrier network, the in-process normalizer and poller, an in-process cache and bus, and the
 * embedded store under DATA_DIR. With REDIS_URL, KAFKA_BROKERS and CLICKHOUSE_URL, every app runs
 * in this process against those services (apps/embedded/mode.ts). One backend (lib/backend) serves
 * every app of the process: one store, one connection per service, one /metrics.
 */
import { startApi, type ApiApp } from '../api/start.ts';
import { startDispatcher } from '../dispatcher/start.ts';
import { startNormalizer } from '../normalizer/start.ts';
import { startPoller } from '../poller/start.ts';
import { backendOptionsOf, openBackend, type Backend } from '../../lib/backend/index.ts';
import { ConfigError, adminTokenLine, loadEnv, type Env } from '../../lib/config/index.ts';
import { flushLogs } from '../../lib/logging/log-stream.ts';
import { createPollerMetrics } from '../../lib/metrics/index.ts';
import { createMailer, noticeSettingsOf, scheduleNotices } from '../../lib/notices/index.ts';
import { refreshPolicyOf, startRefreshTicks } from '../../lib/poller/index.ts';
import { unmovedStoreNotice } from '../../lib/move/index.ts';
import { startReleasingMemory } from '../../lib/process/release-memory.ts';
import { runApp } from '../../lib/process/run.ts';
import { startGatewaySandbox } from '../../lib/sandbox/gateway.ts';
import { startMessagingSandbox } from '../../lib/sandbox/messaging.ts';
import type { MessagingSandboxTarget } from '../../lib/buyer-notices/index.ts';
import { seedEmbeddedHistory } from '../../lib/sandbox/seed.ts';
import { startSandbox } from '../../lib/sandbox/server.ts';
import { startBanner } from './banner.ts';
import { startModeOf } from './mode.ts';
import { quickstartKey } from './quickstart-key.ts';

type Stop = () => Promise<void>;

/** The embedded pipeline's poller (lib/poller's ticks) and the plan notices, in this process. */
function startEmbeddedJobs(env: Env, backend: Backend, api: ApiApp): Stop {
  const { push, deps } = api.runtime;
  const log = (m: string) => api.app.log.info(m);
  // Active and watched shipments are re-polled every POLLER_INTERVAL_SECONDS (push events follow).
  const ticks = startRefreshTicks({
    policy: refreshPolicyOf(env.POLLER_INTERVAL_SECONDS), clock: deps.clock, metrics: createPollerMetrics(backend.metrics.registry),
    active: (sinceMs) => backend.activeShipments(sinceMs),
    watched: (nowMs) => push.watches.pollable(nowMs, push.standing),
    refresh: (s) => deps.tracking.refresh(s.carrier, s.awb, s.mode),
    log: {
      totals: (t) => log(`poller: refreshed ${t.polled} shipments (${t.found} found, ${t.notFound} not found, ${t.errors} errors)`),
      failed: (err) => api.app.log.error({ err }, 'poller tick failed'),
    },
  });
  // Plan-expiry notices: SMTP_URL when set, else .eml files under DATA_DIR/outbox/.
  // Their payment link is this service's own renewal page (PUBLIC_BASE_URL, else where it listens).
  const notices = noticeSettingsOf(env, api.url);
  const mailer = createMailer(env, { from: notices.from });
  const stopNotices = scheduleNotices({
    access: deps.access, mailer, clock: deps.clock, cron: notices.cron,
    log: { info: log, warn: log, error: log },
    content: { paymentBaseUrl: notices.paymentBaseUrl, plans: deps.product.config.plans },
  });
  return async () => {
    await ticks.stop();
    await stopNotices();
    mailer.close();
  };
}

/** The distributed apps in this process, on its backend: normalizer (and push detection), poller (and notices), dispatcher. */
async function startDistributedApps(env: Env, backend: Backend, sandboxUrl: string, messaging: MessagingSandboxTarget): Promise<Stop> {
  const normalizer = await startNormalizer(env, { backend, healthPort: null });
  const poller = await startPoller(env, { backend, healthPort: null, sandboxUrl, liveTarget: 'sandbox' });
  const dispatcher = await startDispatcher(env, { backend, healthPort: null, messagingSandbox: messaging });
  return async () => {
    await poller.stop();
    await dispatcher.stop();
    await normalizer.stop();
  };
}

/** First start without services: a test-mode network history, so lane figures show at once. */
async function seedHistory(env: Env): Promise<void> {
  const seeded = await seedEmbeddedHistory(env.DATA_DIR, {
    shipments: env.SANDBOX_HISTORY_SHIPMENTS, days: env.SANDBOX_HISTORY_DAYS, configDir: env.CONFIG_DIR,
  });
  // A start killed while seeding left a partial seed beside the log: thrown away, seeded whole again.
  const redone = seeded.redone ? ' (a seed cut short by an earlier start was redone)' : '';
  const what = `${seeded.journeys} journeys, ${seeded.polls} polls (test mode)`;
  if (seeded.journeys) process.stdout.write(`seeded a sandbox history: ${what} in ${env.DATA_DIR}${redone}\n`);
}

async function start() {
  const env = loadEnv();
  const mode = startModeOf(env);
  if ('error' in mode) throw new ConfigError(mode.error);
  if (!mode.distributed) await seedHistory(env);
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  // The sandbox payment gateway: every key pays there unless Razorpay is configured for live keys.
  const gateway = await startGatewaySandbox();
  // The sandbox messaging providers (WhatsApp Cloud API, MSG91 Flow, SMTP): customer notices go there.
  const messaging = await startMessagingSandbox();
  const backend = openBackend(backendOptionsOf(env, { name: 'tracking' }));
  const api = await startApi(env, { backend, sandboxUrl: sandbox.url, liveTarget: 'sandbox', paymentSandbox: gateway, messagingSandbox: messaging });
  // As Razorpay's dashboard would: the sandbox gateway's paid links are reported to this API.
  gateway.setWebhookUrl(`${api.url}/billing/razorpay/webhook`);
  // As Meta's and MSG91's dashboards would: statuses and customers' replies come to this API.
  messaging.setWebhooks({ whatsapp: `${api.url}/notices/whatsapp/webhook`, sms: null });
  const stopJobs = mode.distributed ? await startDistributedApps(env, backend, sandbox.url, messaging) : startEmbeddedJobs(env, backend, api);

  // One trial key per store: made and shown whole at the first start, named by its prefix later.
  const { key, record: trial } = await quickstartKey(api.runtime.deps.access, new Date());
  process.stdout.write(startBanner(env, {
    base: api.url, mode, gatewayUrl: gateway.url, sandboxUrl: sandbox.url, messagingUrl: messaging.url, key, trialPrefix: trial.prefix,
    adminTokenLine: adminTokenLine(api), adminTokenFile: api.adminTokenFile,
    unmoved: unmovedStoreNotice(env.DATA_DIR, { pollLog: Boolean(env.KAFKA_BROKERS) }),
  }));
  // The start's garbage (a seed, the checkpoint's file and its decoded copy: ~190 MiB at a million
  // polls, a replay) back to the system now, and later whenever the process goes quiet after growing.
  const stopReleasingMemory = startReleasingMemory();

  return {
    // Fixed order: stop taking requests → stop the jobs and consumers → flush and close stores.
    async stop() {
      api.app.log.info('shutting down');
      stopReleasingMemory();
      await api.app.close();
      await stopJobs();
      await api.runtime.close();
      await backend.close();
      await gateway.close();
      await messaging.close();
      await sandbox.close();
    },
  };
}

runApp('npm start', start, { finally: flushLogs });
