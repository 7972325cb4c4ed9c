import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../context/deps.ts';
import { api } from '../openapi/spec.ts';
import { HealthSchema, ReadinessSchema } from '../openapi/schemas.ts';

/** What these routes use of the API's dependencies. */
type OpsDeps = Pick<ApiDeps, 'metrics' | 'readiness'>;

/** Health, readiness and Prometheus metrics: unauthenticated, for orchestrators and scrapers. */
export function registerOpsRoutes(app: FastifyInstance, deps: OpsDeps): void {
  app.get('/healthz', api({
    operationId: 'health', summary: 'Liveness', caller: 'none', tags: ['Operations'],
    responses: { 200: { description: 'The process answers', schema: HealthSchema } }, errors: [],
  }), async () => ({ status: 'ok' }));

  app.get('/readyz', api({
    operationId: 'readiness', summary: 'Readiness: every dependency answers', caller: 'none', tags: ['Operations'],
    responses: {
      200: { description: 'Ready', schema: ReadinessSchema },
      503: { description: 'A dependency does not answer', schema: ReadinessSchema },
    },
    errors: [],
  }), async (_request, reply) => {
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
