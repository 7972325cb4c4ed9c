/**
 * The embedded default's cache bound (CACHE_MAX_BYTES): a flood of distinct consignments evicts the
 * least recently asked from memory; a delivered record evicted is answered from DATA_DIR/records
 * without polling the carrier again ("cached permanently", docs/engineers/decisions.md), and is
 * metered like any answer. An active record evicted the same way is polled again: the control that
 * shows the flood did evict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awbFor, expectRecord, startApiHarness, type ApiHarness } from '../testutil/harness.ts';

/** A Delhivery number of the sandbox (scenario in the last two digits), distinct per serial. */
const floodAwb = (serial: number, scenario: number) => `9${String(serial).padStart(8, '0')}01${String(scenario).padStart(2, '0')}`;

describe('embedded cache bounded by CACHE_MAX_BYTES', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApiHarness({ env: { CACHE_MAX_BYTES: String(2 ** 20) } });
  });
  afterAll(() => h.close());

  it('answers a delivered record evicted from memory without a carrier poll, and counts the lookup', async () => {
    const k = await h.createKey({ plan: 'business', burst_per_second: 100_000, daily_quota: 100_000, lookups_limit: 100_000 });
    const delivered = awbFor('delhivery', 4);
    const moving = awbFor('delhivery', 2);
    const first = expectRecord(await h.track(k.key, 'delhivery', delivered));
    expect(first.insights.current_stage).toBe('delivered');
    expect(first.cached).toBe(false);
    expectRecord(await h.track(k.key, 'delhivery', moving));

    // ~4 KB a record: 600 distinct ones are more than twice the 1 MiB bound.
    for (let serial = 0; serial < 600; serial++) expectRecord(await h.track(k.key, 'delhivery', floodAwb(serial, serial % 2 === 0 ? 4 : 2)));
    const polls = await h.carrierPolls('delhivery');
    const used = (await h.usage(k.key)).period.lookups_used;

    const again = expectRecord(await h.track(k.key, 'delhivery', delivered));
    expect(again.cached).toBe(true);
    expect(again.stale).toBe(false);
    expect({ ...again, cached: false, insights: null }).toEqual({ ...first, insights: null });
    expect(await h.carrierPolls('delhivery')).toBe(polls);
    expect((await h.usage(k.key)).period.lookups_used).toBe(used + 1);

    // The active record asked for just as long ago was evicted too, and is polled again.
    const movingAgain = expectRecord(await h.track(k.key, 'delhivery', moving));
    expect(movingAgain.cached).toBe(false);
    expect(await h.carrierPolls('delhivery')).toBe(polls + 1);
    expect((await h.usage(k.key)).period.lookups_used).toBe(used + 2);
  }, 120_000);
});
