/**
 * npm start. With no service URLs, the embedded default: one process with the API, the sandbox
 * carrier network, the in-process normalizer and poller, an in-process cache and bus, and the
 * embedded store under DATA_DIR. With REDIS_URL, KAFKA_BROKERS and CLICKHOUSE_URL, every app runs
 * in this process against those services (apps/embedded/mode.ts). Prints the mode, the admin
 * token and the trk_test_ trial key (both at the first start; their prefix and place later), and a curl line to try.
 */
import { buildApp } from '../api/app.ts';
import { flushLogs } from '../api/http/log-stream.ts';
import { createApiRuntime, type ApiRuntime } from '../api/context/runtime.ts';
import { adminTokenLine } from '../api/context/banner.ts';
import { startRefreshScheduler } from '../api/context/scheduler.ts';
import { startDispatcher } from '../dispatcher/start.ts';
import { startNormalizer } from '../normalizer/start.ts';
import { startPoller } from '../poller/start.ts';
import { ConfigError, loadEnv, type Env } from '../../lib/config/index.ts';
import { createMailer, noticeSettingsOf, scheduleNotices } from '../../lib/notices/index.ts';
import { refreshPolicyOf } from '../../lib/poller/index.ts';
import { unmovedStoreNotice } from '../../lib/move/index.ts';
import { serviceLines } from '../../lib/process/banner.ts';
import { runApp } from '../../lib/process/run.ts';
import { startGatewaySandbox } from '../../lib/sandbox/gateway.ts';
import { seedEmbeddedHistory } from '../../lib/sandbox/seed.ts';
import { startSandbox } from '../../lib/sandbox/server.ts';
import { startModeOf } from './mode.ts';
import { quickstartKey } from './quickstart-key.ts';

type Stop = () => Promise<void>;

/** The embedded pipeline's poller and the plan notices, in this process. */
function startEmbeddedJobs(env: Env, runtime: ApiRuntime, log: (m: string) => void, listening: string): Stop {
  // Active and watched shipments are re-polled every POLLER_INTERVAL_SECONDS (push events follow).
  const push = runtime.push;
  const scheduler = startRefreshScheduler(
    runtime.shipments!, runtime.deps.tracking, runtime.deps.clock, log,
    refreshPolicyOf(env.POLLER_INTERVAL_SECONDS), (now) => push.watches.pollable(now, push.standing),
  );
  // Plan-expiry notices: SMTP_URL when set, else .eml files under DATA_DIR/outbox/.
  // Their payment link is this service's own renewal page (PUBLIC_BASE_URL, else where it listens).
  const notices = noticeSettingsOf(env, listening);
  const mailer = createMailer(env, { from: notices.from });
  const stopNotices = scheduleNotices({
    access: runtime.deps.access,
    mailer,
    log: { info: log, warn: log, error: log },
    content: { paymentBaseUrl: notices.paymentBaseUrl, plans: runtime.deps.product.config.plans },
    clock: runtime.deps.clock,
    cron: notices.cron,
  });
  return async () => {
    await scheduler.stop();
    await stopNotices();
    mailer.close();
  };
}

/** The distributed apps in this process: normalizer (and push detection), poller (and notices), dispatcher. */
async function startDistributedApps(env: Env, sandboxUrl: string, runtime: ApiRuntime): Promise<Stop> {
  const normalizer = await startNormalizer(env, { healthPort: null });
  // The API's raw-poll bus: one producer and one spool for the whole process.
  const poller = await startPoller(env, { healthPort: null, sandboxUrl, liveTarget: 'sandbox', bus: runtime.bus });
  const dispatcher = await startDispatcher(env, { healthPort: null });
  return async () => {
    await poller.stop();
    await dispatcher.stop();
    await normalizer.stop();
  };
}

async function start() {
  const env = loadEnv();
  const mode = startModeOf(env);
  if ('error' in mode) throw new ConfigError(mode.error);
  // First start without services: a test-mode network history, so lane figures show at once.
  if (!mode.distributed) {
    const seeded = await seedEmbeddedHistory(env.DATA_DIR, {
      shipments: env.SANDBOX_HISTORY_SHIPMENTS, days: env.SANDBOX_HISTORY_DAYS, configDir: env.CONFIG_DIR,
    });
    // A start killed while seeding left a partial seed beside the log: thrown away, seeded whole again.
    const redone = seeded.redone ? ' (a seed cut short by an earlier start was redone)' : '';
    const what = `${seeded.journeys} journeys, ${seeded.polls} polls (test mode)`;
    if (seeded.journeys) process.stdout.write(`seeded a sandbox history: ${what} in ${env.DATA_DIR}${redone}\n`);
  }
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  // The sandbox payment gateway: every key pays there unless Razorpay is configured for live keys.
  const gateway = await startGatewaySandbox();
  const runtime = await createApiRuntime(env, { sandboxUrl: sandbox.url, liveTarget: 'sandbox', paymentSandbox: gateway });
  const app = await buildApp(runtime.deps);
  const log = (m: string) => app.log.info(m);
  // The address actually bound (PORT=0 picks a free port), for the printed curl line.
  const base = await app.listen({ port: env.PORT, host: env.HOST });
  // As Razorpay's dashboard would: the sandbox gateway's paid links are reported to this API.
  gateway.setWebhookUrl(`${base}/billing/razorpay/webhook`);
  const stopJobs = mode.distributed ? await startDistributedApps(env, sandbox.url, runtime) : startEmbeddedJobs(env, runtime, log, base);

  // One trial key per store: made and shown whole at the first start, named by its prefix later.
  const { key, record: trial } = await quickstartKey(runtime.deps.access, new Date());
  const cliUrl = base === 'http://127.0.0.1:3000' ? '' : ` --url ${base}`;
  const unmoved = unmovedStoreNotice(env.DATA_DIR, { pollLog: Boolean(env.KAFKA_BROKERS) });
  const lines = [
    '',
    `Tracking API listening on ${base}`,
    `  mode:        ${mode.banner}`,
    `  docs:        ${base}/docs      trial page: ${base}/trial`,
    `  renew/pay:   ${base}/billing/renew?key=${trial.prefix}&plan=starter   (sandbox payment gateway: ${gateway.url})`,
    `  data dir:    ${env.DATA_DIR}   sandbox carriers: ${sandbox.url}`,
    `  metrics:     ${base}/metrics   health: ${base}/healthz`,
    ...(mode.distributed
      ? [`  services:    ${serviceLines(env, ['kafka', 'clickhouse', 'redis']).map(([name, value]) => `${name} ${value}`).join('   ')}`]
      : []),
    // Keys live in Redis now: an embedded store left under DATA_DIR answers nothing.
    ...(env.REDIS_URL && unmoved ? [`  DATA_DIR:    ${unmoved}`] : []),
    `  ADMIN_TOKEN: ${adminTokenLine({ ...runtime, adminToken: runtime.deps.adminToken })}`,
    key
      ? `  trial key:   ${key}   (trk_test_: sandbox carriers, 100 lookups, 14 days; shown at this first start only)`
      : `  trial key:   ${trial.prefix}…   (made at the first start and shown then; a new one: the trial page or the keys create line below)`,
    env.WEBHOOK_ALLOWED_TARGETS
      ? `  webhooks:    private targets opened by WEBHOOK_ALLOWED_TARGETS=${env.WEBHOOK_ALLOWED_TARGETS} (every key may send there)`
      : '  webhooks:    public targets only; to receive on this machine start with WEBHOOK_ALLOWED_TARGETS=127.0.0.1/32',
    '',
    key ? 'Try it:' : `Try it (with the trial key ${trial.prefix}… or another):`,
    `  curl -s -H "X-API-Key: ${key ?? 'trk_test_…'}" ${base}/v1/track/delhivery/1234567890102`,
    `More keys (the admin CLI${runtime.adminTokenFile ? `, which reads the token from ${runtime.adminTokenFile}` : ', with ADMIN_TOKEN set'}):`,
    `  npm run cli -- keys create --plan trial --mode test --email ops@example.com${cliUrl}`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');

  return {
    // Fixed order: stop taking requests → stop the jobs and consumers → flush and close stores.
    async stop() {
      app.log.info('shutting down');
      await app.close();
      await stopJobs();
      await runtime.close();
      await gateway.close();
      await sandbox.close();
    },
  };
}

runApp('npm start', start, { finally: flushLogs });
