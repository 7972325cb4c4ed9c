import { Redis } from 'ioredis';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testutil/stores.ts';
import { RedisKv } from '../kv/index.ts';
import { noticesSuite } from './testutil/notices.suite.ts';

noticesSuite({
  name: 'Redis',
  async open() {
    const client = new Redis(await testRedisUrl());
    const ns = `${testNamespace()}notices:`;
    return { kv: new RedisKv(client, ns), async cleanup() { await deleteUnder(client, ns); client.disconnect(); } };
  },
});
