import { Redis } from 'ioredis';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testutil/stores.ts';
import { RedisKv } from '../kv/index.ts';
import { runningLateSuite } from './testutil/running-late.suite.ts';

runningLateSuite('redis', async () => {
  const client = new Redis(await testRedisUrl());
  const namespace = `${testNamespace()}push:`;
  return { kv: new RedisKv(client, namespace), async cleanup() { await deleteUnder(client, namespace); client.disconnect(); } };
});
