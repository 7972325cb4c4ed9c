import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../deps.ts';

/** Health, readiness and Prometheus metrics: unauthenticated, for orchestrators and scrapers. */
export function registerOpsRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const results = await Promise.all(deps.readiness.map(async ({ name, check }) => {
      try {
        await check();
        return { name, ok: true };
      } catch (err) {
        return { name, ok: false, error: (err as Error).message };
      }
    }));
    const ready = results.every((r) => r.ok);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: results });
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
