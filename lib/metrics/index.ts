import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { createProbeCounter, type ProbeCounter } from './probes.ts';

/** The service's Prometheus metrics, on a registry of its own (no global state between apps/tests). */
export interface Metrics {
  registry: Registry;
  lookups: Counter<'outcome' | 'carrier'>;
  cacheHits: Counter<'carrier' | 'kind'>;
  carrierLatency: Histogram<'carrier' | 'outcome'>;
  carrierErrors: Counter<'carrier'>;
  unmappedScans: Counter<'carrier'>;
  /** Probes answered (they are not logged per request). */
  probes: ProbeCounter;
}

export function createMetrics(withProcessMetrics = true): Metrics {
  const registry = new Registry();
  if (withProcessMetrics) collectDefaultMetrics({ register: registry });
  return {
    registry,
    lookups: new Counter({
      name: 'tracking_lookups_total', help: 'Tracking lookups by outcome and carrier', labelNames: ['outcome', 'carrier'], registers: [registry],
    }),
    cacheHits: new Counter({
      name: 'tracking_cache_hits_total', help: 'Lookups answered from cache, by kind (fresh, stale, not_found)', labelNames: ['carrier', 'kind'],
      registers: [registry],
    }),
    carrierLatency: new Histogram({
      name: 'tracking_carrier_poll_seconds', help: 'Carrier poll latency by outcome', labelNames: ['carrier', 'outcome'], registers: [registry],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    carrierErrors: new Counter({ name: 'tracking_carrier_errors_total', help: 'Carrier polls that failed', labelNames: ['carrier'], registers: [registry] }),
    unmappedScans: new Counter({
      name: 'tracking_unmapped_scans_total', help: 'Scans no mapping rule knows (mapping gaps)', labelNames: ['carrier'], registers: [registry],
    }),
    probes: createProbeCounter(registry),
  };
}
export { countProbe, countProbesOf, createProbeCounter, isProbe, type ProbeCounter } from './probes.ts';
export {
  createDispatcherMetrics, createNormalizerMetrics, createNoticeMetrics, createPollerMetrics, type DispatcherMetrics, type NoticeMetrics,
  type NormalizerMetrics, type PollerMetrics,
} from './pipeline.ts';
