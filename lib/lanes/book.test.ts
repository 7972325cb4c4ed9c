import { describe, expect, it } from 'vitest';
import { normalizePoll } from '../normalize/index.ts';
import { product } from '../testing/product.ts';
import { LaneBook, closureOfShipment } from './book.ts';
import { journeyPoll } from './fixture.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS as DAY } from '../time/index.ts';

const NOW = Date.UTC(2026, 10, 20, 12);

function closure(awb: string, transitHours: number, closedAtMs = NOW - DAY, mode: KeyMode = 'live') {
  const poll = journeyPoll({ awb, origin: '110001', destination: '560001', outcome: 'delivered', closedAtMs, transitHours, failedRemarks: [], eddMs: null });
  const result = normalizePoll(poll, product.rules);
  if (result.kind !== 'found') throw new Error('not found');
  return closureOfShipment(result.shipment, mode, Date.parse(poll.polled_at))!;
}

describe('embedded lane book', () => {
  it('gives the window p50 and sample size, each shipment once, sandbox lanes apart', async () => {
    const book = new LaneBook({ clock: () => NOW, ttlMs: 0 });
    expect(await book.get('delhivery:110:560')).toBeNull();
    book.add(closure('A', 72));
    book.add(closure('B', 24));
    expect(await book.get('delhivery:110:560')).toEqual({ median_transit_days: 2, sample_size: 2 });
    book.add(closure('C', 168));
    book.add(closure('A', 96)); // re-polled later: replaces A
    expect(await book.get('delhivery:110:560')).toEqual({ median_transit_days: 4, sample_size: 3 });
    book.add(closure('OLD', 1, NOW - 91 * DAY)); // outside the 90-day window
    expect((await book.get('delhivery:110:560'))?.sample_size).toBe(3);
    expect(await book.get('test:delhivery:110:560')).toBeNull();
    book.add(closure('S', 5, NOW - DAY, 'test'));
    expect(await book.get('test:delhivery:110:560')).toEqual({ median_transit_days: 5 / 24, sample_size: 1 });
    expect((await book.lanesBetween('110', '560', 'live')).map((s) => s.lane)).toEqual(['delhivery:110:560']);
  });
});
