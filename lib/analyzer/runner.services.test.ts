import { Redis } from 'ioredis';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testutil/stores.ts';
import { RedisKv } from '../kv/index.ts';
import { runnerSuite } from './testutil/runner.suite.ts';

// Two connections on one namespace: two API instances' view of the same Redis.
runnerSuite({
  name: 'redis',
  async open() {
    const url = await testRedisUrl();
    const clients = [new Redis(url), new Redis(url)];
    const ns = `${testNamespace()}push:`;
    return {
      kvs: [new RedisKv(clients[0]!, ns), new RedisKv(clients[1]!, ns)],
      async cleanup() { await deleteUnder(clients[0]!, ns); for (const c of clients) c.disconnect(); },
    };
  },
});
