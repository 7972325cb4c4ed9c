/**
 * The API on its own (distributed mode): REDIS_URL for keys, limits and cache; SANDBOX_URL for
 * trk_test_ keys; live keys go to the real carrier endpoints. Only listens: buildApp() is the app.
 */
import { ConfigError, loadEnv } from '../../lib/config/index.ts';
import { buildApp } from './app.ts';
import { flushLogs } from './log-stream.ts';
import { createApiRuntime } from './runtime.ts';

async function main(): Promise<void> {
  const env = loadEnv();
  const runtime = await createApiRuntime(env, { sandboxUrl: env.SANDBOX_URL ?? null, liveTarget: 'carriers' });
  const app = await buildApp(runtime.deps);
  await app.listen({ port: env.PORT, host: env.HOST });
  if (runtime.adminTokenGenerated) app.log.warn(`ADMIN_TOKEN not set; generated for this run: ${runtime.deps.adminToken}`);

  const stop = async () => {
    await app.close();
    await runtime.close();
    await flushLogs();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch(async (err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  await flushLogs();
  process.exit(1);
});
