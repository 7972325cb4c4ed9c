import { describe, expect, it } from 'vitest';
import type { MappedEvent } from '../clickhouse/rows.ts';
import { diffEvents, formatDiff } from './diff.ts';

const event = (id: string, status: string, code: string, reason_code: string | null = null, awb = 'A1'): MappedEvent =>
  ({ event_id: id, carrier: 'dtdc', awb, status, code, reason_code });

describe('replay diff', () => {
  it('counts unchanged, changed, new and missing events by carrier and status', () => {
    const stored = [
      event('e1', 'in_transit', 'dispatched'),
      event('e2', 'in_transit', 'unknown'),
      event('e3', 'in_transit', 'unknown'),
      event('e4', 'exception', 'delivery_attempted', 'other'),
      event('e5', 'delivered', 'delivered'),
      event('x1', 'in_transit', 'unknown', null, 'OTHER-AWB'),
    ];
    const fresh = [
      event('e1', 'in_transit', 'dispatched'),
      event('e2', 'in_transit', 'exception', 'other'),
      event('e3', 'in_transit', 'exception', 'other'),
      event('e4', 'exception', 'delivery_attempted', 'refused'),
      event('e6', 'out_for_delivery', 'out_for_delivery'),
    ];
    const report = diffEvents(stored, fresh);
    expect(report).toMatchObject({ compared: 5, unchanged: 1, changed: 3, added: 1, missing: 1 });
    expect(report.rows).toEqual([
      { carrier: 'dtdc', from: 'in_transit/unknown', to: 'in_transit/exception (other)', count: 2 },
      { carrier: 'dtdc', from: 'delivered/delivered', to: null, count: 1 },
      { carrier: 'dtdc', from: 'exception/delivery_attempted (other)', to: 'exception/delivery_attempted (refused)', count: 1 },
      { carrier: 'dtdc', from: null, to: 'out_for_delivery/out_for_delivery', count: 1 },
    ]);
    expect(formatDiff(report)).toMatch(/3 changed/);
  });
});
