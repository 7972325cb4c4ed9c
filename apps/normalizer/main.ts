/**
 * The normalizer on its own: KAFKA_BROKERS and CLICKHOUSE_URL required (REDIS_URL for push's change
 * detection); PORT serves /healthz and /readyz. Reads tracking.carrier-polls.v1 in a consumer
 * group and writes ClickHouse.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { runApp } from '../../lib/process/run.ts';
import { startNormalizer } from './start.ts';

runApp('normalizer', () => {
  const env = loadEnv();
  return startNormalizer(env, { database: env.CLICKHOUSE_DATABASE });
});
