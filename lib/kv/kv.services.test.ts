import { Redis } from 'ioredis';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testutil/stores.ts';
import { connectRedis, type RedisClient } from '../redis/index.ts';
import { deleteUnder as deleteUnderAnywhere, testRedisClusterUrl } from '../redis/testutil/cluster.ts';
import { kvSuite, type KvHarness } from './testutil/kv.suite.ts';
import { RedisKv } from './redis.ts';

/** A store in a namespace of its own for the crash test: what the child writes, read back after. */
async function forChild(url: string, connect: (url: string) => RedisClient): ReturnType<KvHarness['forChild']> {
  const namespace = `${testNamespace()}kv:`;
  const client = connect(url);
  return {
    store: { kind: 'redis', url, namespace },
    open: () => new RedisKv(client, namespace),
    async cleanup() { await deleteUnderAnywhere(client, namespace); client.disconnect(); },
  };
}

const redis: KvHarness = {
  name: 'redis',
  async open() {
    const client = new Redis(await testRedisUrl());
    const ns = `${testNamespace()}kv:`;
    return {
      kv: new RedisKv(client, ns),
      async reopen() { return new RedisKv(client, ns); },
      async cleanup() { await deleteUnder(client, ns); client.disconnect(); },
    };
  },
  forChild: async () => forChild(await testRedisUrl(), (url) => new Redis(url)),
};

// Every key is one document, set or sorted set, and every script touches one key: the same
// behaviour must hold on a cluster.
const cluster: KvHarness = {
  name: 'redis cluster',
  async open() {
    const client = connectRedis(await testRedisClusterUrl());
    const ns = `${testNamespace()}kv:`;
    return {
      kv: new RedisKv(client, ns),
      async reopen() { return new RedisKv(client, ns); },
      async cleanup() { await deleteUnderAnywhere(client, ns); client.disconnect(); },
    };
  },
  forChild: async () => forChild(await testRedisClusterUrl(), (url) => connectRedis(url)),
};

kvSuite(redis);
kvSuite(cluster);
