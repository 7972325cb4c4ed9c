import { randomBytes } from 'node:crypto';
import { testRedisClusterUrl, testRedisUrl } from '../access/testutil/stores.ts';
import { connectRedis } from '../redis/index.ts';
import { deleteUnder } from '../redis/testutil/cluster.ts';
import { settleCrashSuite } from './testutil/settle-crash.suite.ts';

for (const [name, urlOf] of [['redis', testRedisUrl], ['redis cluster', testRedisClusterUrl]] as const) {
  settleCrashSuite(name, async () => {
    const url = await urlOf();
    const namespace = `test:${randomBytes(6).toString('hex')}:`;
    return {
      backend: { kind: 'redis', url, namespace },
      dispose: async () => {
        const redis = connectRedis(url);
        await deleteUnder(redis, namespace);
        redis.disconnect();
      },
    };
  });
}
