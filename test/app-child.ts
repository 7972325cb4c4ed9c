/**
 * One app in a child process for kill and stop tests (tests only): `{ app, ...start options }` as
 * JSON in argv[2] (`deadlineMs`: the runner's stop deadline), the environment as usual. Runs under the shared process runner, as each app's
 * main does, and prints "ready <address or health port>" once started.
 */
import type { AddressInfo } from 'node:net';
import { startApi } from '../apps/api/start.ts';
import { startDispatcher } from '../apps/dispatcher/start.ts';
import { startNormalizer } from '../apps/normalizer/start.ts';
import { startPoller } from '../apps/poller/start.ts';
import { loadEnv } from '../lib/config/index.ts';
import { runApp } from '../lib/process/run.ts';

const { app: name, deadlineMs, ...options } = JSON.parse(process.argv[2] ?? '{}') as { app: 'api' | 'normalizer' | 'poller' | 'dispatcher'; deadlineMs?: number } & Record<string, unknown>;
const portOf = (health: { server: { address(): unknown } }) => (health.server.address() as AddressInfo).port;

runApp(name, async () => {
  const env = loadEnv();
  switch (name) {
    case 'api': {
      const api = await startApi(env, { sandboxUrl: env.SANDBOX_URL ?? null, liveTarget: 'sandbox' });
      process.stdout.write(`ready ${api.url}\n`);
      return api;
    }
    case 'normalizer': {
      const app = await startNormalizer(env, { ...options, healthPort: 0 });
      process.stdout.write(`ready ${portOf(app.health)}\n`);
      return app;
    }
    case 'poller': {
      const app = await startPoller(env, { ...options, healthPort: 0 });
      process.stdout.write(`ready ${portOf(app.health)}\n`);
      return app;
    }
    case 'dispatcher': {
      const app = await startDispatcher(env, { ...options, healthPort: 0 });
      process.stdout.write(`ready ${portOf(app.health)}\n`);
      return app;
    }
  }
}, { deadlineMs });
