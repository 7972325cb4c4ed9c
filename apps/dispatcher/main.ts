/**
 * The webhook dispatcher on its own (npm run dispatcher): KAFKA_BROKERS and REDIS_URL required,
 * CLICKHOUSE_URL for webhook_deliveries; PORT serves /healthz, /readyz and /metrics. Reads
 * tracking.webhook-events.v1 in a consumer group and delivers; run as many as you like.
 */
import { ConfigError, loadEnv } from '../../lib/config/index.ts';
import { startDispatcher } from './start.ts';

async function main(): Promise<void> {
  const app = await startDispatcher(loadEnv(), { database: process.env.CLICKHOUSE_DATABASE });
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
