import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['apps/**/*.test.ts', 'lib/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Service-backed tests share real Redis/Kafka/ClickHouse; files run in parallel on 2 cores.
    maxWorkers: 2,
  },
});
