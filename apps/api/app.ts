import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ApiDeps } from './deps.ts';
import { registerErrorHandling } from './errors.ts';
import { buildOpenApi } from './openapi.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerOpsRoutes } from './routes/ops.ts';
import { registerTrackRoutes } from './routes/track.ts';
import { registerTrialRoutes } from './routes/trial.ts';
import { registerUsageRoutes } from './routes/usage.ts';

/** Logs name a key only by its prefix; the key header and admin token never reach a log line. */
const requestSerializer = (request: { method: string; url: string; id: string; keyPrefix?: string }) => ({
  method: request.method,
  url: request.url,
  id: request.id,
  key_prefix: request.keyPrefix,
});

/** The API as a Fastify app. `server.ts` (or the embedded default) only listens. */
export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: deps.logLevel ?? 'info', serializers: { req: requestSerializer }, ...(deps.logStream ? { stream: deps.logStream } : {}) },
    genReqId: () => `req_${randomUUID().replaceAll('-', '')}`,
    trustProxy: true,
    bodyLimit: 64 * 1024,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  registerErrorHandling(app);
  await app.register(formbody);
  await app.register(swagger, { mode: 'static', specification: { document: buildOpenApi(deps.product) as never } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', async () => app.swagger());

  registerOpsRoutes(app, deps);
  registerTrackRoutes(app, deps);
  registerUsageRoutes(app, deps);
  registerAdminRoutes(app, deps);
  registerTrialRoutes(app, deps);
  return app;
}
