import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { countProbesOf } from '../metrics/index.ts';
import { readinessOf, type ReadinessCheck } from '../readiness/index.ts';

export interface HealthServerOptions {
  logLevel: string;
  /** The process's registry (lib/backend's): /metrics shows every part that runs in the process. */
  registry: Registry;
  /** The services' probes (lib/backend) and the app's own (its consumer, its writer). */
  checks: readonly ReadinessCheck[];
}

/**
 * A distributed app's own HTTP server: /healthz (the process answers), /readyz (every check; 503
 * only when a check that does not merely degrade fails) and /metrics. Probes are counted
 * (http_probe_requests_total), not logged per request. Its logger is the app's log.
 */
export function createHealthServer(options: HealthServerOptions): FastifyInstance {
  const health = Fastify({ logger: { level: options.logLevel }, logController: new LogController({ disableRequestLogging: true }) });
  countProbesOf(health, options.registry);
  health.get('/healthz', async () => ({ status: 'ok' }));
  health.get('/readyz', async (_request, reply) => {
    const readiness = await readinessOf(options.checks);
    return reply.code(readiness.status === 'not_ready' ? 503 : 200).send(readiness);
  });
  health.get('/metrics', async (_request, reply) => reply.type(options.registry.contentType).send(await options.registry.metrics()));
  return health;
}
