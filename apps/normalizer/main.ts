/**
 * The normalizer on its own: KAFKA_BROKERS and CLICKHOUSE_URL required (REDIS_URL for push's change
 * detection); PORT serves /healthz and /readyz. Reads tracking.carrier-polls.v1 in a consumer
 * group and writes ClickHouse.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { healthLines, printBanner, serviceLines } from '../../lib/process/banner.ts';
import { runApp } from '../../lib/process/run.ts';
import { startNormalizer } from './start.ts';

runApp('normalizer', async () => {
  const env = loadEnv();
  const app = await startNormalizer(env, { database: env.CLICKHOUSE_DATABASE });
  printBanner({
    title: 'Tracking normalizer: reads carrier polls from Kafka, writes events, shipments and lane closures to ClickHouse',
    lines: [
      ...serviceLines(env, ['kafka', 'clickhouse', 'redis']),
      ['reads', 'tracking.carrier-polls.v1 (group tracking-normalizer)'],
      ...healthLines(app.health.server),
    ],
    next: ['Polls arrive when the API or the poller looks shipments up (npm run api, npm run poller).'],
  });
  return app;
});
