/**
 * India Post's reasons for non-delivery (the Department of Posts' list an undelivered article is
 * marked with, as its tracking writes them after "Item Not Delivered" or alone): each is a failed
 * delivery attempt with one of the six NDR reasons (issue 13).
 */
import { describe, expect, it } from 'vitest';
import type { NdrReason } from '../schemas/index.ts';
import { answer } from '../testutil/product.ts';
import { makePoll, scan } from '../testutil/polls.ts';

export const POSTAL_NON_DELIVERY_REASONS: readonly [text: string, reason: NdrReason][] = [
  ['Addressee Absent', 'customer_unavailable'],
  ['Addressee Left Without Instructions', 'customer_unavailable'],
  ['Addressee On Leave', 'customer_unavailable'],
  ['Intimation Served', 'customer_unavailable'],
  ['Not Called For', 'customer_unavailable'],
  ['Unclaimed', 'customer_unavailable'],
  ['Addressee Requested Later Delivery', 'customer_unavailable'],
  ['Addressee Moved', 'address_issue'],
  ['Addressee Shifted', 'address_issue'],
  ['Addressee Cannot Be Located', 'address_issue'],
  ['Insufficient Address', 'address_issue'],
  ['Incomplete Address', 'address_issue'],
  ['No Such Person', 'address_issue'],
  ['No Such Number', 'address_issue'],
  ['No Such Street', 'address_issue'],
  ['Wrong PIN Code', 'address_issue'],
  ['Outside Delivery Jurisdiction', 'address_issue'],
  ['Refused', 'refused'],
  ['Addressee Refused To Accept', 'refused'],
  ['Door Locked', 'premises_closed'],
  ['Premises Locked', 'premises_closed'],
  ['Office Closed', 'premises_closed'],
  ['Holiday', 'premises_closed'],
  ['VP Amount Not Paid', 'cod_not_ready'],
  ['COD Amount Not Ready', 'cod_not_ready'],
  ['Addressee Unable To Pay', 'cod_not_ready'],
  ['Deceased', 'other'],
  ['Beat Not Served', 'other'],
  ['Delivery Not Attempted Due To Natural Calamity', 'other'],
];

function lastEvent(carrier: string, raw: string) {
  const record = answer(makePoll({
    carrier, awb: 'EE123456702IN',
    scans: [
      scan({ occurred_at: '2026-11-20T09:00:00', raw_status: 'Out for Delivery', location: 'Pune City H.O' }),
      scan({ occurred_at: '2026-11-20T15:00:00', raw_status: raw, location: 'Pune City H.O' }),
    ],
  }));
  return record.events[0]!;
}

describe.each(['indiapost', 'speedpost'])('%s: every official reason for non-delivery', (carrier) => {
  it.each(POSTAL_NON_DELIVERY_REASONS)('"%s" alone is a failed attempt, reason %s', (text, reason) => {
    expect(lastEvent(carrier, text)).toMatchObject({ code: 'delivery_attempted', status: 'exception', reason_code: reason });
  });

  it.each(POSTAL_NON_DELIVERY_REASONS)('"Item Not Delivered - %s" gives reason %s', (text, reason) => {
    const record = answer(makePoll({
      carrier, awb: 'EE123456702IN',
      scans: [scan({ occurred_at: '2026-11-20T15:00:00', raw_status: 'Item Not Delivered', remarks: text, location: 'Pune City H.O' })],
    }));
    expect(record.events[0]).toMatchObject({ code: 'delivery_attempted', reason_code: reason });
  });
});
