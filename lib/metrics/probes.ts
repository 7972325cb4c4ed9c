import type { FastifyInstance } from 'fastify';
import { Counter, type Registry } from 'prom-client';

/** What load balancers and Prometheus call every few seconds: counted, never logged per request. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** True for a health, readiness or metrics probe (the query string ignored). */
export function isProbe(url: string): boolean {
  const at = url.indexOf('?');
  return PROBE_PATHS.has(at === -1 ? url : url.slice(0, at));
}

export type ProbeCounter = Counter<'path' | 'status'>;

/**
 * `http_probe_requests_total{path,status}`: the probes a process answered. A probe every few
 * seconds wrote a log line each, burying the lines that matter; the counter keeps the figure.
 */
export function createProbeCounter(registry: Registry): ProbeCounter {
  // One per registry: apps sharing one (npm start runs several in one process) share the counter.
  const registered = registry.getSingleMetric('http_probe_requests_total') as ProbeCounter | undefined;
  if (registered) return registered;
  return new Counter({
    name: 'http_probe_requests_total', help: 'Health, readiness and metrics probes answered, by path and status',
    labelNames: ['path', 'status'], registers: [registry],
  });
}

export function countProbe(counter: ProbeCounter, url: string, status: number): void {
  const at = url.indexOf('?');
  counter.inc({ path: at === -1 ? url : url.slice(0, at), status: String(status) });
}

/**
 * A pipeline app's health server (normalizer, poller, dispatcher) serves probes only: created with
 * request logging disabled (LogController), it counts each answer here instead.
 */
export function countProbesOf(app: FastifyInstance, registry: Registry): void {
  const counter = createProbeCounter(registry);
  app.addHook('onResponse', (request, reply, done) => {
    countProbe(counter, request.url, reply.statusCode);
    done();
  });
}
