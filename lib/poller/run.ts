import pLimit from 'p-limit';
import type { RefreshCandidate } from './plan.ts';

export interface RefreshTotals {
  polled: number;
  found: number;
  notFound: number;
  errors: number;
}

/**
 * Re-polls `due` with at most `perCarrier` polls in flight per carrier (carriers rate-limit
 * aggressively). `refresh` must never throw for carrier trouble; a throw counts as an error.
 * Once `signal` is aborted (the poller stopping) no further poll starts: a tick's share can take
 * minutes at 4 per carrier, far past a stop's deadline, and the shipments left stay due for the
 * next tick. Polls in flight finish (their results are published).
 */
export async function refreshShipments<C extends RefreshCandidate>(
  due: readonly C[],
  refresh: (c: C) => Promise<'found' | 'not_found' | 'error'>,
  perCarrier = 4,
  signal?: AbortSignal,
): Promise<RefreshTotals> {
  const limits = new Map<string, ReturnType<typeof pLimit>>();
  const totals: RefreshTotals = { polled: 0, found: 0, notFound: 0, errors: 0 };
  await Promise.all(due.map((candidate) => {
    let limit = limits.get(candidate.carrier);
    if (!limit) limits.set(candidate.carrier, (limit = pLimit(perCarrier)));
    return limit(async () => {
      if (signal?.aborted) return;
      const kind = await refresh(candidate).catch(() => 'error' as const);
      totals.polled++;
      if (kind === 'found') totals.found++;
      else if (kind === 'not_found') totals.notFound++;
      else totals.errors++;
    });
  }));
  return totals;
}
