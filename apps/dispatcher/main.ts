/**
 * The webhook dispatcher on its own (npm run dispatcher): KAFKA_BROKERS and REDIS_URL required,
 * CLICKHOUSE_URL for webhook_deliveries; PORT serves /healthz, /readyz and /metrics. Reads
 * tracking.webhook-events.v1 in a consumer group and delivers; run as many as you like.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { healthLines, printBanner, serviceLines } from '../../lib/process/banner.ts';
import { runApp } from '../../lib/process/run.ts';
import { startDispatcher } from './start.ts';

runApp('dispatcher', async () => {
  const env = loadEnv();
  const app = await startDispatcher(env, { database: env.CLICKHOUSE_DATABASE });
  printBanner({
    title: 'Tracking webhook dispatcher: delivers push events to the customers\' endpoints',
    lines: [...serviceLines(env, ['kafka', 'clickhouse', 'redis']), ['reads', 'tracking.webhook-events.v1'], ...healthLines(app.health.server)],
  });
  return app;
});
