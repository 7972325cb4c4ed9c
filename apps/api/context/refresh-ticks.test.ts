/** The embedded default's poller: re-polls active shipments without a client asking or paying. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntimePoller } from '../testutil/poller.ts';
import { HOUR_MS, awbFor, expectRecord, startApiHarness, type ApiHarness } from '../testutil/harness.ts';
import type { CarrierPoll } from '../../../lib/schemas/index.ts';

describe('the one-process poller (lib/poller ticks)', () => {
  let h: ApiHarness;
  beforeAll(async () => { h = await startApiHarness(); });
  afterAll(async () => { await h?.close(); });

  it('re-polls active shipments once their last poll is 2 hours old, as source poller, consuming no lookups', async () => {
    const key = await h.createKey({ lookups_limit: 10 });
    const active = awbFor('delhivery', 2);
    const delivered = awbFor('delhivery', 4);
    expectRecord(await h.track(key.key, 'delhivery', active));
    expectRecord(await h.track(key.key, 'delhivery', delivered));
    const polls: CarrierPoll[] = [];
    const bus = h.runtime.bus as unknown as { subscribe(handler: (poll: CarrierPoll) => void): void };
    bus.subscribe((poll) => { polls.push(poll); });

    const scheduler = startRuntimePoller(h.runtime, () => h.clock.now());
    try {
      await scheduler.tick();
      expect(polls).toEqual([]); // polled just now: not due yet

      h.clock.advance(2 * HOUR_MS + 60_000);
      await scheduler.tick();
      await h.runtime.bus.flush();
      // Only the active shipment: a delivered one is terminal and never re-polled.
      expect(polls.map((p) => [p.awb, p.source])).toEqual([[active, 'poller']]);
      expect((await h.usage(key.key)).period.lookups_used).toBe(2);

      // The refreshed record now answers lookups from cache.
      const again = expectRecord(await h.track(key.key, 'delhivery', active));
      expect(again.cached).toBe(true);
      expect(again.last_polled_at).toBe(polls[0]!.polled_at);
    } finally {
      await scheduler.stop();
    }
  });
});
