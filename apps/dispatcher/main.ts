/**
 * The webhook dispatcher on its own (npm run dispatcher): KAFKA_BROKERS and REDIS_URL required,
 * CLICKHOUSE_URL for webhook_deliveries; PORT serves /healthz, /readyz and /metrics. Reads
 * tracking.webhook-events.v1 in a consumer group and delivers; run as many as you like.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { runApp } from '../../lib/process/run.ts';
import { startDispatcher } from './start.ts';

runApp('dispatcher', () => {
  const env = loadEnv();
  return startDispatcher(env, { database: env.CLICKHOUSE_DATABASE });
});
