import type { FastifyInstance } from 'fastify';
import type { Env } from '../../lib/config/index.ts';
import { StopSteps } from '../../lib/process/run.ts';
import { buildApp } from './app.ts';
import { createApiRuntime, type ApiRuntime, type RuntimeOptions } from './context/runtime.ts';

export interface ApiApp {
  app: FastifyInstance;
  /** What the API was built from: its stores, tracking service, push and the process's backend (the one-process start's jobs use them). */
  runtime: ApiRuntime;
  /** The address it listens on. */
  url: string;
  /** The admin API's token, whether this start generated it (no ADMIN_TOKEN; the banner shows it) and where it is kept. */
  adminToken: string;
  adminTokenGenerated: boolean;
  adminTokenFile: string | null;
  stop(): Promise<void>;
  stopStep(): string | null;
}

/**
 * The API on its own: the runtime from the environment, listening on PORT. Stops in order: stop
 * taking requests and answer those in flight → close the runtime (stores, cache, bus flushes).
 */
export async function startApi(env: Env, options: RuntimeOptions): Promise<ApiApp> {
  const runtime = await createApiRuntime(env, options);
  const app = await buildApp(runtime.deps);
  const url = await app.listen({ port: env.PORT, host: env.HOST });
  // A generated token is the normal first start, not a fault: said at info, and shown in the banner.
  if (runtime.adminTokenGenerated) app.log.info(`ADMIN_TOKEN not set; generated one, kept in ${runtime.adminTokenFile} for later starts (mode 0600)`);
  const steps = new StopSteps();
  return {
    app, runtime, url, adminToken: runtime.deps.adminToken, adminTokenGenerated: runtime.adminTokenGenerated, adminTokenFile: runtime.adminTokenFile,
    stopStep: () => steps.underWay(),
    async stop() {
      await steps.step('the requests in flight', () => app.close());
      await steps.step('the runtime (stores, cache, poll producer)', () => runtime.close());
    },
  };
}
