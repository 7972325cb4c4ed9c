import { Redis } from 'ioredis';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testing.ts';
import { connectRedis } from '../redis/index.ts';
import { deleteUnder as deleteUnderAnywhere, testRedisClusterUrl } from '../redis/testing.ts';
import { RedisPushKv } from './kv-redis.ts';
import { pushKvSuite, type KvHarness } from './kv.suite.ts';

const redis: KvHarness = {
  name: 'redis',
  async open() {
    const client = new Redis(await testRedisUrl());
    const ns = `${testNamespace()}push:`;
    return {
      kv: new RedisPushKv(client, ns),
      async reopen() { return new RedisPushKv(client, ns); },
      async cleanup() { await deleteUnder(client, ns); client.disconnect(); },
    };
  },
};

// Every push key is one document, set or sorted set, and every script touches one key: the same
// behaviour must hold on a cluster.
const cluster: KvHarness = {
  name: 'redis cluster',
  async open() {
    const client = connectRedis(await testRedisClusterUrl());
    const ns = `${testNamespace()}push:`;
    return {
      kv: new RedisPushKv(client, ns),
      async reopen() { return new RedisPushKv(client, ns); },
      async cleanup() { await deleteUnderAnywhere(client, ns); client.disconnect(); },
    };
  },
};

pushKvSuite(redis);
pushKvSuite(cluster);
