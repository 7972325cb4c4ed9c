/**
 * The API on its own (distributed mode): REDIS_URL for keys, limits and cache; SANDBOX_URL for
 * trk_test_ keys; live keys go to the real carrier endpoints. Runs under the shared process runner
 * (SIGTERM/SIGINT → stop in order → exit 0, or exit 1 past the deadline naming what hung).
 */
import { loadEnv } from '../../lib/config/index.ts';
import { printBanner } from '../../lib/process/banner.ts';
import { runApp } from '../../lib/process/run.ts';
import { apiBanner } from './context/banner.ts';
import { flushLogs } from '../../lib/logging/log-stream.ts';
import { startApi } from './start.ts';

runApp('api', async () => {
  const env = loadEnv();
  const api = await startApi(env, { sandboxUrl: env.SANDBOX_URL ?? null, liveTarget: 'carriers' });
  printBanner(apiBanner(env, api));
  return api;
}, { finally: flushLogs });
