import cron from 'node-cron';
import type { PollerMetrics } from '../metrics/index.ts';
import { cronOfTick, mergeCandidates, shipmentsDue, type PollCandidate, type RefreshCandidate, type RefreshPolicy } from './plan.ts';
import { refreshShipments, type RefreshTotals } from './run.ts';

export interface RefreshTicksOptions {
  policy: RefreshPolicy;
  /** The non-terminal shipments polled since `sinceMs` (now less the policy's lookback). */
  active(sinceMs: number): Promise<readonly RefreshCandidate[]>;
  /** Watched shipments (push): re-polled like active ones, even before their first scan. */
  watched(nowMs: number): Promise<readonly RefreshCandidate[]>;
  /** One re-poll; never throws for carrier trouble (a throw counts as an error). */
  refresh(candidate: PollCandidate): Promise<'found' | 'not_found' | 'error'>;
  clock: () => number;
  metrics: PollerMetrics;
  /** A tick that polled something, and a tick that failed. */
  log: { totals(totals: RefreshTotals): void; failed(err: unknown): void };
  /** Cron of the ticks (default from the policy's tick); null: no schedule, ticks only through tick() (tests). */
  cron?: string | null;
}

export interface RefreshTicks {
  /** One refresh round now (what each scheduled tick runs); a round under way is joined, never overlapped. */
  tick(): Promise<RefreshTotals>;
  /** Stops the schedule and the round under way: no further poll starts, polls in flight finish. */
  stop(): Promise<void>;
}

const NONE: RefreshTotals = { polled: 0, found: 0, notFound: 0, errors: 0 };

/**
 * The poller's tick, in one place for every start (the poller app, the embedded default): every
 * tick re-polls its share of the due shipments (source `poller`; no customer's lookups are used).
 */
export function startRefreshTicks(options: RefreshTicksOptions): RefreshTicks {
  const { policy, clock, metrics } = options;
  let running: Promise<RefreshTotals> | null = null;
  // Aborted at stop: the tick in progress starts no further poll (run.ts).
  const stopping = new AbortController();
  const round = async (): Promise<RefreshTotals> => {
    const now = clock();
    const [active, watched] = await Promise.all([options.active(now - policy.lookbackMs), options.watched(now)]);
    const due = shipmentsDue(mergeCandidates(active, watched), now, policy);
    if (due.length === 0) {
      metrics.tick(0, false);
      return NONE;
    }
    const totals = await refreshShipments(due, async (candidate) => {
      const outcome = await options.refresh(candidate).catch(() => 'error' as const);
      metrics.poll(candidate.carrier, outcome);
      return outcome;
    }, undefined, stopping.signal);
    if (totals.polled) options.log.totals(totals);
    metrics.tick(due.length, false);
    return totals;
  };
  const tick = () => {
    running ??= round()
      .catch((err: unknown) => {
        metrics.tick(0, true);
        throw err;
      })
      .finally(() => { running = null; });
    return running;
  };
  const expression = options.cron === undefined ? cronOfTick(policy.tickMs) : options.cron;
  const task = expression === null ? null : cron.schedule(expression, () => { tick().catch((err: unknown) => options.log.failed(err)); });
  return {
    tick,
    async stop() {
      await task?.stop();
      stopping.abort();
      await running?.catch(() => undefined);
    },
  };
}
