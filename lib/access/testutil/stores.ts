/** Test support: one harness per store implementation, so every behaviour is tested on both. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DEFAULT_CONFIG_DIR, loadPlans } from '../../config/index.ts';
import { EmbeddedAccessStore } from '../embedded-store.ts';
import { connectRedis } from '../../redis/index.ts';
import { deleteUnder, keysUnder, testRedisClusterUrl } from '../../redis/testutil/cluster.ts';
import { RedisAccessStore } from '../redis-store.ts';
import type { AccessStore } from '../store.ts';

export const plans = loadPlans(DEFAULT_CONFIG_DIR);

export interface Harness {
  store: AccessStore;
  /** Closes the store and opens a new one over the same data, as a restart would. */
  reopen(): Promise<AccessStore>;
  /** Everything the store has persisted, as text, to prove what it does and does not hold. */
  raw(): Promise<string>;
  dispose(): Promise<void>;
}

export interface HarnessFactory {
  name: string;
  create(): Promise<Harness>;
}

async function answers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

let redisUrl: Promise<string> | undefined;
/**
 * The Redis of the test services (test/services/redis.ts), at the address the run's globalSetup
 * provided (tests only use keys of their own namespace). urls.ts is loaded on demand: it imports
 * vitest, and benches and the crash tests' child processes import this file outside vitest.
 */
export function testRedisUrl(): Promise<string> {
  redisUrl ??= (async () => {
    const url = (await import('../../../test/services/urls.ts')).testServiceUrl('redis');
    if (await answers(url)) return url;
    throw new Error(`No Redis at ${url}: run the tests with vitest (its globalSetup starts the services) or \`npm run services -- up\`.`);
  })();
  return redisUrl;
}

/** A namespace no other test run uses; only keys under it are ever deleted. */
export function testNamespace(): string {
  return `test:${randomBytes(6).toString('hex')}:access:`;
}

/** Every key under `namespace` (from every master of a cluster), and their deletion. */
export { deleteUnder, keysUnder, testRedisClusterUrl };

/** The Redis store on one server or on the 3-master cluster of the test services. */
function redisHarnessOn(name: string, urlOf: () => Promise<string>): HarnessFactory {
  return {
    name,
    async create() {
      const url = await urlOf();
      const namespace = testNamespace();
      const admin = connectRedis(url);
      const open = () => new RedisAccessStore({ plans, redis: url, namespace });
      const harness: Harness = {
        store: open(),
        async reopen() {
          await harness.store.close();
          harness.store = open();
          return harness.store;
        },
        async raw() {
          const parts: string[] = [];
          for (const key of await keysUnder(admin, namespace)) {
            const type = await admin.type(key);
            const value = type === 'hash' ? await admin.hgetall(key) : type === 'set' ? await admin.smembers(key) : await admin.get(key);
            parts.push(`${key} ${JSON.stringify(value)}`);
          }
          return parts.join('\n');
        },
        async dispose() {
          await harness.store.close();
          await deleteUnder(admin, namespace);
          await admin.quit();
        },
      };
      return harness;
    },
  };
}

export const redisHarness = redisHarnessOn('redis', testRedisUrl);
export const redisClusterHarness = redisHarnessOn('redis cluster', testRedisClusterUrl);

export const embeddedHarness: HarnessFactory = {
  name: 'embedded',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'access-test-'));
    const open = () => new EmbeddedAccessStore({ plans, dir });
    const harness: Harness = {
      store: open(),
      async reopen() {
        await harness.store.close();
        harness.store = open();
        return harness.store;
      },
      async raw() {
        return readdirSync(dir).map((name) => `${name} ${readFileSync(join(dir, name), 'utf8')}`).join('\n');
      },
      async dispose() {
        await harness.store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
    return harness;
  },
};

/**
 * A real (starter, test-mode) key in the access store under `namespace` (e.g. `test:…:access:`),
 * for tests of workers that ask a key's standing (poller, detector, dispatcher). Its prefix.
 */
export async function createTestKeyPrefix(redis: Redis, namespace: string, email = `worker-${randomBytes(4).toString('hex')}@example.com`): Promise<string> {
  const store = new RedisAccessStore({ plans, redis, namespace });
  return (await store.createKey({ plan: 'starter', mode: 'test', email }, new Date())).record.prefix;
}
