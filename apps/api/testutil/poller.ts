import { Registry } from 'prom-client';
import { createPollerMetrics } from '../../../lib/metrics/index.ts';
import { DEFAULT_REFRESH_POLICY, startRefreshTicks, type RefreshPolicy, type RefreshTicks } from '../../../lib/poller/index.ts';
import type { ApiRuntime } from '../context/runtime.ts';

/**
 * The one-process start's poller (lib/poller's ticks, as apps/embedded/main.ts wires them) on a
 * test's runtime: active shipments from the backend, watched ones from push. No schedule unless
 * `cron` is given: tests call tick(). Its metrics go to a registry of its own (a test may start several).
 */
export function startRuntimePoller(runtime: ApiRuntime, clock: () => number, policy: RefreshPolicy = DEFAULT_REFRESH_POLICY, cron: string | null = null): RefreshTicks {
  const { push, deps, backend } = runtime;
  return startRefreshTicks({
    policy, clock, cron, metrics: createPollerMetrics(new Registry()),
    active: (sinceMs) => backend.activeShipments(sinceMs),
    watched: (nowMs) => push.watches.pollable(nowMs, push.standing),
    refresh: (s) => deps.tracking.refresh(s.carrier, s.awb, s.mode),
    log: { totals: () => {}, failed: () => {} },
  });
}
