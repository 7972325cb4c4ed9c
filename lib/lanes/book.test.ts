import { describe, expect, it } from 'vitest';
import { LaneBook } from './book.ts';

describe('embedded lane book', () => {
  it('gives the median and sample size of a lane, counting each shipment once, updated on every add', async () => {
    const book = new LaneBook();
    expect(await book.get('dtdc:110:560')).toBeNull();
    book.add({ lane: 'dtdc:110:560', shipmentKey: 'dtdc:A', transitDays: 3 });
    book.add({ lane: 'dtdc:110:560', shipmentKey: 'dtdc:B', transitDays: 1 });
    expect(await book.get('dtdc:110:560')).toEqual({ median_transit_days: 2, sample_size: 2 });
    book.add({ lane: 'dtdc:110:560', shipmentKey: 'dtdc:C', transitDays: 7 });
    book.add({ lane: 'dtdc:110:560', shipmentKey: 'dtdc:A', transitDays: 4 }); // re-polled: replaces A
    expect(await book.get('dtdc:110:560')).toEqual({ median_transit_days: 4, sample_size: 3 });
    expect(await book.get('test:dtdc:110:560')).toBeNull();
  });
});
