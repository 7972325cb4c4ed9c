import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { normalized } from '../testutil/product.ts';
import { journeyPoll } from '../testutil/polls.ts';
import { requireAwb } from '../schemas/index.ts';
import type { NormalizedShipment } from '../normalize/index.ts';
import { compactShipment, entryBytes } from './entry.ts';
import { createMemoryCache, FINAL_SHARE } from './memory.ts';
import { cacheKey, type CachedLookup } from './policy.ts';

const MIB = 2 ** 20;
const delivered = normalized(journeyPoll('delhivery', 4));
const journey = journeyPoll('delhivery', 2);
/** The same journey polled before delivery: its four oldest scans (Delhivery lists newest first). */
const moving = normalized({ ...journey, scans: journey.scans.slice(-4) });

/** The shipment as if it were consignment `awb` (its own entry, its own text). */
function as(shipment: NormalizedShipment, awb: string): CachedLookup {
  return { shipment: compactShipment({ ...shipment, record: { ...shipment.record, awb, tracking_number: awb } }), polledAtMs: 1 };
}

describe('embedded tracking cache', () => {
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'cache-test-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  it('holds no more than its bound in bytes under a flood of distinct AWBs, keeping the latest', async () => {
    expect(delivered.facts.stage).toBe('delivered');
    expect(moving.facts.stage).toBe('in_transit');
    const cache = createMemoryCache({ maxBytes: MIB, dir: null });
    const perEntry = entryBytes(as(moving, '9000000000001').shipment);
    for (let i = 0; i < 5_000; i++) {
      await cache.set(cacheKey('test', 'delhivery', requireAwb(`9${String(i).padStart(12, '0')}`)), as(moving, `9${String(i).padStart(12, '0')}`), 60_000);
      expect(cache.held().bytes).toBeLessThanOrEqual(MIB);
    }
    // Full: about as many entries as the bound holds, and the latest are the ones held.
    expect(cache.held().entries).toBeGreaterThan(MIB / (perEntry + 200));
    expect(cache.held().entries).toBeLessThan(MIB / perEntry);
    expect(await cache.get(cacheKey('test', 'delhivery', requireAwb('9000000004999')))).not.toBeNull();
    expect(await cache.get(cacheKey('test', 'delhivery', requireAwb('9000000000000')))).toBeNull();
  });

  it('reads a delivered record back from its file once memory let it go, and after a restart; active ones are not kept there', async () => {
    const cache = createMemoryCache({ maxBytes: MIB, dir });
    const first = as(delivered, '9100000000000');
    await cache.set(cacheKey('test', 'delhivery', requireAwb('9100000000000')), first, null);
    await cache.set(cacheKey('test', 'delhivery', requireAwb('9200000000000')), as(moving, '9200000000000'), 60_000);
    for (let i = 1; i < 2_000; i++) {
      const awb = `93${String(i).padStart(11, '0')}`;
      await cache.set(cacheKey('test', 'delhivery', requireAwb(awb)), as(moving, awb), 60_000);
    }
    expect(cache.held().bytes).toBeLessThanOrEqual(MIB);
    expect(await cache.get(cacheKey('test', 'delhivery', requireAwb('9100000000000')))).toEqual(first);
    expect(await cache.get(cacheKey('test', 'delhivery', requireAwb('9200000000000')))).toBeNull();
    // Only the delivered record has a file (one of 256 directories).
    const dirs = await readdir(dir);
    expect(dirs).toHaveLength(1);
    expect(await readdir(join(dir, dirs[0]!))).toHaveLength(1);

    const restarted = createMemoryCache({ maxBytes: MIB, dir });
    expect(await restarted.get(cacheKey('test', 'delhivery', requireAwb('9100000000000')))).toEqual(first);
    expect(await restarted.get(cacheKey('live', 'delhivery', requireAwb('9100000000000')))).toBeNull();
  });

  it('keeps delivered records with files to their share of memory, moving ones to the rest, and reads the others back', async () => {
    const cache = createMemoryCache({ maxBytes: MIB, dir });
    const awbOf = (prefix: string, i: number) => requireAwb(`${prefix}${String(i).padStart(11, '0')}`);
    const firstMoving = as(moving, awbOf('95', 0));
    await cache.set(cacheKey('test', 'delhivery', awbOf('95', 0)), firstMoving, 60_000);
    for (let i = 0; i < 1_000; i++) await cache.set(cacheKey('test', 'delhivery', awbOf('94', i)), as(delivered, awbOf('94', i)), null);
    const perDelivered = entryBytes(as(delivered, '9400000000000').shipment);
    // The delivered flood held no more than its share and did not push the moving record out.
    expect(cache.held().bytes - entryBytes(firstMoving.shipment)).toBeLessThanOrEqual(MIB * FINAL_SHARE);
    expect(cache.held().entries).toBeLessThan(2 + (MIB * FINAL_SHARE) / perDelivered);
    expect(await cache.get(cacheKey('test', 'delhivery', awbOf('95', 0)))).toEqual(firstMoving);
    // The first delivered ones were let go from memory and come back from their files.
    const back = await cache.get(cacheKey('test', 'delhivery', awbOf('94', 0)));
    expect(back?.shipment?.awb).toBe('9400000000000');
    // A moving record that is delivered later moves to the final share (no second copy in memory).
    const before = cache.held().entries;
    await cache.set(cacheKey('test', 'delhivery', awbOf('95', 0)), as(delivered, awbOf('95', 0)), null);
    expect(cache.held().entries).toBeLessThanOrEqual(before);
    expect((await cache.get(cacheKey('test', 'delhivery', awbOf('95', 0))))?.shipment?.facts.stage).toBe('delivered');
  });
});
