/**
 * npm start — the embedded default: one process with the API, the sandbox carrier network, the
 * in-process normalizer and poller, an in-process cache and bus, and the embedded store under
 * DATA_DIR. Prints the admin token, a fresh trk_test_ trial key and a curl line to try.
 */
import { buildApp } from '../api/app.ts';
import { flushLogs } from '../api/log-stream.ts';
import { createApiRuntime } from '../api/runtime.ts';
import { startRefreshScheduler } from '../api/scheduler.ts';
import { ConfigError, loadEnv } from '../../lib/config/index.ts';
import { createMailer, noticeSettingsFromEnv, scheduleNotices } from '../../lib/notices/index.ts';
import { startSandbox } from '../../lib/sandbox/server.ts';
import { applyHeapPolicy } from '../api/heap-policy.ts';
import { refreshPolicyOf } from '../../lib/poller/index.ts';

async function main(): Promise<void> {
  applyHeapPolicy();
  const env = loadEnv();
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  const runtime = await createApiRuntime(env, { sandboxUrl: sandbox.url, liveTarget: 'sandbox' });
  const app = await buildApp(runtime.deps);
  // Active and watched shipments are re-polled every POLLER_INTERVAL_SECONDS (push events follow).
  const push = runtime.push;
  const scheduler = startRefreshScheduler(
    runtime.shipments!, runtime.deps.tracking, runtime.deps.clock, (m) => app.log.info(m),
    refreshPolicyOf(env.POLLER_INTERVAL_SECONDS), (now) => push.watches.pollable(now),
  );
  // Plan-expiry notices: SMTP_URL when set, else .eml files under DATA_DIR/outbox/.
  const notices = noticeSettingsFromEnv(process.env);
  const mailer = createMailer(env, { from: notices.from });
  const stopNotices = scheduleNotices({
    access: runtime.deps.access,
    mailer,
    log: { info: (m) => app.log.info(m), warn: (m) => app.log.warn(m), error: (m) => app.log.error(m) },
    content: { paymentBaseUrl: notices.paymentBaseUrl, plans: runtime.deps.product.config.plans },
    clock: runtime.deps.clock,
    cron: notices.cron,
  });
  // The address actually bound (PORT=0 picks a free port), for the printed curl line.
  const base = await app.listen({ port: env.PORT, host: env.HOST });

  const { key } = await runtime.deps.access.createKey({ plan: 'trial', mode: 'test', email: 'quickstart@example.com' }, new Date());
  const lines = [
    '',
    `Tracking API (embedded default) listening on ${base}`,
    `  docs:        ${base}/docs      trial page: ${base}/trial`,
    `  data dir:    ${env.DATA_DIR}   sandbox carriers: ${sandbox.url}`,
    runtime.adminTokenGenerated ? `  ADMIN_TOKEN: ${runtime.deps.adminToken}   (generated for this run; set ADMIN_TOKEN to fix it)` : '  ADMIN_TOKEN: (from the environment)',
    `  trial key:   ${key}   (trk_test_: sandbox carriers, 100 lookups, 14 days)`,
    '',
    'Try it:',
    `  curl -s -H "X-API-Key: ${key}" ${base}/v1/track/delhivery/1234567890102`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal}: shutting down`);
    // Fixed order: stop taking requests → stop the poller and notices → flush and close stores.
    await app.close();
    await scheduler.stop();
    await stopNotices();
    mailer.close();
    await runtime.close();
    await sandbox.close();
    await flushLogs();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch(async (err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  await flushLogs();
  process.exit(1);
});
