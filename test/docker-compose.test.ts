/** docker-compose.yml cannot run here (no Docker engine): this keeps it in step with the repository. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { image?: string; command?: string[]; environment?: Record<string, unknown>; depends_on?: Record<string, unknown> }>;
};

describe('docker-compose.yml', () => {
  it('runs current Kafka (KRaft), ClickHouse and Redis images', () => {
    expect(compose.services.kafka?.image).toMatch(/^apache\/kafka:3\.9\./);
    expect(compose.services.kafka?.environment?.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(compose.services.clickhouse?.image).toMatch(/^clickhouse\/clickhouse-server:\d+/);
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
