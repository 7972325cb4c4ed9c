/**
 * The poller on its own: KAFKA_BROKERS, CLICKHOUSE_URL and REDIS_URL required (SANDBOX_URL for
 * sandbox shipments); PORT serves /healthz. Re-polls active shipments every 2 hours, spread out.
 */
import { ConfigError, loadEnv } from '../../lib/config/index.ts';
import { startPoller } from './start.ts';

async function main(): Promise<void> {
  const app = await startPoller(loadEnv(), { database: process.env.CLICKHOUSE_DATABASE });
  const stop = async () => {
    await app.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
