/**
 * The normalizer on its own: KAFKA_BROKERS and CLICKHOUSE_URL required; PORT serves /healthz and
 * /readyz. Reads tracking.carrier-polls.v1 in a consumer group and writes ClickHouse.
 */
import { ConfigError, loadEnv } from '../../lib/config/index.ts';
import { startNormalizer } from './start.ts';

async function main(): Promise<void> {
  const app = await startNormalizer(loadEnv(), { database: process.env.CLICKHOUSE_DATABASE });
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
