/**
 * The real API for `npm run bench -- api`, wired as the apps wire it (bench/api.ts forks it with
 * their heap policy's node flags): with
 * REDIS_URL set, as `apps/api/server.ts` does (Redis keys, limits and cache; under a namespace of
 * its own, deleted at stop); without it, as `npm start` (apps/embedded/main.ts) does: embedded
 * store under DATA_DIR, in-process cache, normalizer and refresh scheduler. Both get an in-process
 * sandbox carrier network for trk_test_ keys. Forked by bench/api.ts; reports its URL and admin
 * token over IPC.
 */
import { randomBytes } from 'node:crypto';
import { buildApp } from '../../apps/api/app.ts';
import { createApiRuntime } from '../../apps/api/context/runtime.ts';
import { startRuntimePoller } from '../../apps/api/testutil/poller.ts';
import { deleteUnder } from '../../lib/access/testutil/stores.ts';
import { loadEnv } from '../../lib/config/index.ts';
import { DEFAULT_REFRESH_POLICY, cronOfTick } from '../../lib/poller/index.ts';
import { connectRedis } from '../../lib/redis/index.ts';
import { startReleasingMemory } from '../../lib/process/release-memory.ts';
import { startSandbox } from '../../lib/sandbox/server.ts';
import { serveParent } from './protocol.ts';

const env = loadEnv();
const namespace = `bench:${randomBytes(6).toString('hex')}:`;
const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
const runtime = await createApiRuntime(env, { sandboxUrl: sandbox.url, liveTarget: 'sandbox', redisNamespace: namespace });
const app = await buildApp(runtime.deps);
// As npm start: the poller's ticks on their schedule (policy from POLLER_INTERVAL_SECONDS's default).
const scheduler = env.REDIS_URL ? null : startRuntimePoller(runtime, runtime.deps.clock, DEFAULT_REFRESH_POLICY, cronOfTick(DEFAULT_REFRESH_POLICY.tickMs));
const url = await app.listen({ port: 0, host: '127.0.0.1' });
// As npm start (apps/embedded/main.ts): the start's garbage back to the system, then on idle.
const stopReleasingMemory = env.REDIS_URL ? () => undefined : startReleasingMemory();

serveParent(async () => {
  // The order of apps/embedded/main.ts: stop taking requests → poller → stores → carriers.
  stopReleasingMemory();
  await app.close();
  await scheduler?.stop();
  await runtime.close();
  await sandbox.close();
  if (env.REDIS_URL) {
    const redis = connectRedis(env.REDIS_URL);
    try {
      await deleteUnder(redis, namespace);
    } finally {
      await redis.quit();
    }
  }
}, () => (runtime.shipments ? { shipments: runtime.shipments.size } : {}));
process.send?.({ type: 'ready', url, adminToken: runtime.deps.adminToken });
