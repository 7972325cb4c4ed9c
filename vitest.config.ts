import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['apps/**/*.test.ts', 'lib/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // Starts Redis, ClickHouse, Kafka and the Redis Cluster when the run includes a *.services or
    // *.outage test, and hands every test their addresses (inject('serviceUrls'), test/services/urls.ts).
    globalSetup: ['test/services/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Service-backed tests share real Redis/Kafka/ClickHouse; files run in parallel on 2 cores.
    maxWorkers: 2,
  },
});
