import cron from 'node-cron';
import {
  DEFAULT_REFRESH_POLICY, cronOfTick, mergeCandidates, refreshShipments, shipmentsDue, type RefreshCandidate, type RefreshPolicy,
} from '../../../lib/poller/index.ts';
import type { ShipmentIndex } from '../../../lib/pipeline/shipment-index.ts';
import type { TrackingService } from '../../../lib/tracking/index.ts';

export interface Scheduler {
  /** One refresh round now (also what each cron tick runs). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The embedded default's poller: every tick re-polls its share of the active shipments whose
 * last poll is older than the interval (source `poller`; no customer's lookups are used).
 */
export function startRefreshScheduler(
  shipments: ShipmentIndex, tracking: TrackingService, clock: () => number,
  log: (message: string) => void, policy: RefreshPolicy = DEFAULT_REFRESH_POLICY,
  /** Watched shipments (push): re-polled like active ones, even before their first scan. */
  watched: (nowMs: number) => Promise<RefreshCandidate[]> = async () => [],
): Scheduler {
  let running: Promise<void> | null = null;
  const tick = async () => {
    if (running) return running; // a slow round is never overlapped by the next tick
    running = (async () => {
      const candidates = mergeCandidates(shipments.active(clock() - policy.lookbackMs), await watched(clock()));
      const due = shipmentsDue(candidates, clock(), policy);
      if (due.length === 0) return;
      const totals = await refreshShipments(due, (s) => tracking.refresh(s.carrier, s.awb, s.mode));
      log(`poller: refreshed ${totals.polled} shipments (${totals.found} found, ${totals.notFound} not found, ${totals.errors} errors)`);
    })().finally(() => { running = null; });
    return running;
  };
  const task = cron.schedule(cronOfTick(policy.tickMs), () => { void tick(); });
  return {
    tick,
    async stop() {
      await task.stop();
      await running;
    },
  };
}
