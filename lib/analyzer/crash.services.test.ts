import { Redis } from 'ioredis';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testutil/stores.ts';
import { RedisKv } from '../kv/index.ts';
import { crashSuite } from './testutil/crash.suite.ts';

// A namespace of the test Redis per test: the killed process's and the restarted runner's view of it.
crashSuite({
  name: 'redis',
  async create() {
    const url = await testRedisUrl();
    const namespace = `${testNamespace()}push:`;
    const clients: Redis[] = [];
    return {
      child: { kind: 'redis', url, namespace },
      open: () => { const client = new Redis(url); clients.push(client); return new RedisKv(client, namespace); },
      async cleanup() {
        const admin = new Redis(url);
        await deleteUnder(admin, namespace);
        admin.disconnect();
        for (const c of clients) c.disconnect();
      },
    };
  },
});
