import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../context/deps.ts';
import { readinessOf } from '../../../lib/readiness/index.ts';
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
    description: 'Ready: every dependency answers. Degraded (still 200): Kafka or ClickHouse is away and the service answers without it '
      + '(polls wait in the spool, lane figures may be older): keep routing, alert. Not ready (503): the key store or the carriers are unreachable.',
    responses: {
      200: { description: 'Ready, or degraded but answering', schema: ReadinessSchema },
      503: { description: 'A dependency it cannot answer without does not answer', schema: ReadinessSchema },
    },
    errors: [],
  }), async (_request, reply) => {
    const readiness = await readinessOf(deps.readiness);
    return reply.code(readiness.status === 'not_ready' ? 503 : 200).send(readiness);
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
