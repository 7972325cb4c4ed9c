/** Every row of the interface spec's four raw-scan mapping tables, as decided in decisions.md. */
import { describe, expect, it } from 'vitest';
import { answer } from '../testutil/product.ts';
import { makePoll, scan } from '../testutil/polls.ts';

type Row = [raw: string, status: string, code: string, stage: string];

function latestOf(carrier: string, raw: string) {
  const record = answer(makePoll({
    carrier,
    awb: carrier === 'indiapost' || carrier === 'speedpost' ? 'EE123456702IN' : '1234567890102',
    scans: [scan({ occurred_at: '2026-11-20T10:00:00', raw_status: raw, location: 'Hub' })],
  }));
  return { record, event: record.events[0]! };
}

function checkTable(carrier: string, rows: Row[]) {
  it.each(rows)('%s → status %s, code %s, stage %s', (raw, status, code, stage) => {
    const { record, event } = latestOf(carrier, raw);
    expect(event.status).toBe(status);
    expect(event.code).toBe(code);
    expect(record.status).toBe(status);
    expect(record.insights.current_stage).toBe(stage);
  });
}

describe('national surface/express courier (delhivery)', () => {
  checkTable('delhivery', [
    ['Manifested', 'awaiting_pickup', 'booked', 'awaiting_pickup'],
    ['Order Created', 'awaiting_pickup', 'booked', 'awaiting_pickup'],
    ['Pending', 'awaiting_pickup', 'booked', 'awaiting_pickup'],
    ['Picked Up', 'picked_up', 'picked_up', 'in_transit'],
    ['Inscan', 'picked_up', 'picked_up', 'in_transit'],
    ['In Transit', 'in_transit', 'dispatched', 'in_transit'],
    ['Dispatched', 'in_transit', 'dispatched', 'in_transit'],
    ['Out for Delivery', 'out_for_delivery', 'out_for_delivery', 'out_for_delivery'],
    ['Delivered', 'delivered', 'delivered', 'delivered'],
    // decisions.md: a failed attempt is status exception, not returned.
    ['Undelivered', 'exception', 'delivery_attempted', 'delivery_attempted'],
    ['Failed Attempt', 'exception', 'delivery_attempted', 'delivery_attempted'],
    ['Not Picked: cancelled by seller', 'cancelled', 'exception', 'cancelled'],
    ['Return to Origin', 'returned', 'rto_initiated', 'rto_in_transit'],
  ]);
});

describe('air express courier (bluedart)', () => {
  checkTable('bluedart', [
    ['Manifested', 'shipped', 'bagged', 'awaiting_pickup'],
    ['Data Received', 'shipped', 'bagged', 'awaiting_pickup'],
    ['Picked Up', 'picked_up', 'picked_up', 'in_transit'],
    ['Collected', 'picked_up', 'picked_up', 'in_transit'],
    ['In Transit', 'in_transit', 'received', 'in_transit'],
    ['Arrived at Hub', 'in_transit', 'received', 'in_transit'],
    ['Dispatched to Destination', 'in_transit', 'dispatched', 'in_transit'],
    ['Out for Delivery', 'out_for_delivery', 'out_for_delivery', 'out_for_delivery'],
    ['Delivered', 'delivered', 'delivered', 'delivered'],
    ['Undelivered', 'exception', 'delivery_attempted', 'delivery_attempted'],
    ['Failed Attempt', 'exception', 'delivery_attempted', 'delivery_attempted'],
    ['Return to Origin', 'returned', 'rto_initiated', 'rto_in_transit'],
  ]);
});

describe('postal service (indiapost and speedpost)', () => {
  const rows: Row[] = [
    ['Item Booked', 'picked_up', 'booked', 'in_transit'],
    ['Item Bagged', 'in_transit', 'bagged', 'in_transit'],
    ['Item Dispatched', 'in_transit', 'dispatched', 'in_transit'],
    ['Item Despatched', 'in_transit', 'dispatched', 'in_transit'],
    ['Item Received', 'in_transit', 'received', 'in_transit'],
    ['Out for Delivery', 'out_for_delivery', 'out_for_delivery', 'out_for_delivery'],
    ['Item Delivered', 'delivered', 'delivered', 'delivered'],
    ['Article Delivered', 'delivered', 'delivered', 'delivered'],
    ['Door Locked', 'exception', 'delivery_attempted', 'delivery_attempted'],
    ['Addressee Absent', 'exception', 'delivery_attempted', 'delivery_attempted'],
    ['Item Returned to Sender', 'returned', 'rto_delivered', 'rto_delivered'],
  ];
  describe('indiapost', () => checkTable('indiapost', rows));
  describe('speedpost', () => checkTable('speedpost', rows));
});

describe('professional branch-network courier (professionalcouriers)', () => {
  checkTable('professionalcouriers', [
    ['outfordelivery: Out for Delivery - Area', 'out_for_delivery', 'out_for_delivery', 'out_for_delivery'],
    ['delivered: Delivered - Area', 'delivered', 'delivered', 'delivered'],
    ['intransit: Despatched to Chennai Hub', 'in_transit', 'dispatched', 'in_transit'],
    ['intransit: Received at Chennai Hub', 'in_transit', 'received', 'in_transit'],
    ['intransit: Bag Despatched to Chennai Hub', 'in_transit', 'bagged', 'in_transit'],
    ['Despatched to Tiruvannamalai - MTP', 'in_transit', 'dispatched', 'in_transit'],
    ['Received at Tiruvannamalai', 'in_transit', 'received', 'in_transit'],
    ['Bag Despatched to Chennai', 'in_transit', 'bagged', 'in_transit'],
    ['Address Improper - Area', 'exception', 'delivery_attempted', 'delivery_attempted'],
  ]);

  it('matches unspaced and punctuated spellings alike', () => {
    for (const raw of ['OUTFORDELIVERY', 'Out-For-Delivery', 'out for  delivery', 'outfordelivery : Area']) {
      expect(latestOf('professionalcouriers', raw).event.code).toBe('out_for_delivery');
    }
  });

  it('gives Address Improper the address_issue NDR reason (the spec\'s incomplete_address)', () => {
    const { record } = latestOf('professionalcouriers', 'Address Improper - Area');
    expect(record.delivery_attempts.attempts[0]?.reason_code).toBe('address_issue');
    expect(record.insights.attention_reason).toBe('failed_attempt');
  });
});
