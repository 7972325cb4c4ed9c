/**
 * The poller on its own: KAFKA_BROKERS, CLICKHOUSE_URL and REDIS_URL required (SANDBOX_URL for
 * sandbox shipments); PORT serves /healthz. Re-polls active and watched shipments every
 * POLLER_INTERVAL_SECONDS (default 2 hours), spread out.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { runApp } from '../../lib/process/run.ts';
import { startPoller } from './start.ts';

runApp('poller', () => {
  const env = loadEnv();
  return startPoller(env, { database: env.CLICKHOUSE_DATABASE });
});
