/**
 * The poller on its own: KAFKA_BROKERS, CLICKHOUSE_URL and REDIS_URL required (SANDBOX_URL for
 * sandbox shipments); PORT serves /healthz. Re-polls active and watched shipments every
 * POLLER_INTERVAL_SECONDS (default 2 hours), spread out.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { healthLines, printBanner, redactUrl, serviceLines } from '../../lib/process/banner.ts';
import { runApp } from '../../lib/process/run.ts';
import { startPoller } from './start.ts';

runApp('poller', async () => {
  const env = loadEnv();
  const app = await startPoller(env, { database: env.CLICKHOUSE_DATABASE });
  printBanner({
    title: 'Tracking poller: re-polls active and watched shipments, publishes the polls to Kafka',
    lines: [
      ...serviceLines(env, ['kafka', 'clickhouse', 'redis']),
      ['sandbox', env.SANDBOX_URL ? `${redactUrl(env.SANDBOX_URL)} (trk_test_ shipments)` : '(SANDBOX_URL not set: trk_test_ shipments are not re-polled)'],
      ['every', `${env.POLLER_INTERVAL_SECONDS} s per shipment (POLLER_INTERVAL_SECONDS), spread out`],
      ...healthLines(app.health.server),
    ],
  });
  return app;
});
