/**
 * Test support: a test-mode history of the sandbox network (lib/sandbox/history.ts) fed to a
 * harness's in-process normalizer, and the delivery model rebuilt from it at once (instead of
 * waiting for PREDICTION_REBUILD_SECONDS). Each journey's latest poll is enough: it carries every
 * scan made by then, as the embedded default's first start seeds it. Only closed journeys are fed:
 * the model learns from nothing else, and moving ones would fill the poller's rounds (oldest first)
 * ahead of the shipments a test watches.
 */
import { loadCalendar } from '../../../lib/calendar/index.ts';
import { loadNetworkConfig } from '../../../lib/network/config.ts';
import { loadPlaces } from '../../../lib/places/index.ts';
import { historyPolls } from '../../../lib/sandbox/history.ts';
import type { KeyMode } from '../../../lib/schemas/index.ts';
import type { ApiHarness } from './harness.ts';

export interface SeedOptions {
  shipments: number;
  days: number;
  seed: number;
  /** Which key mode's network the polls belong to; default test (the sandbox's). */
  mode?: KeyMode;
}

/** Feeds the history ending now (the harness's clock) and rebuilds the model; returns the journeys fed. */
export async function seedHistory(h: ApiHarness, options: SeedOptions): Promise<number> {
  const index = h.runtime.shipments;
  if (!index) throw new Error('seedHistory needs the embedded pipeline (no KAFKA_BROKERS)');
  let journeys = 0;
  const endMs = h.clock.now();
  for await (const { journey, polls } of historyPolls({
    shipments: options.shipments, days: options.days, seed: options.seed, endMs,
    config: loadNetworkConfig(), calendar: loadCalendar(), places: loadPlaces(),
  })) {
    const latest = polls.at(-1);
    if (!latest || journey.closedAt >= endMs) continue;
    index.handle(latest, options.mode ?? 'test');
    journeys++;
  }
  h.runtime.predictions!.rebuild();
  return journeys;
}
