import { randomBytes } from 'node:crypto';
import { testRedisClusterUrl, testRedisUrl } from '../access/testing.ts';
import { connectRedis } from '../redis/index.ts';
import { deleteUnder } from '../redis/testing.ts';
import { settleCrashSuite } from './settle-crash.suite.ts';

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
