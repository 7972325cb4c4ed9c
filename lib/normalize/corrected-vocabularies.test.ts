/**
 * The vocabularies carrier-formats.md's "Corrections from real bodies" names, each mapped by
 * config/mappings: Shree Maruti's documented statuses, Blue Dart's upper-case texts, the texts real
 * answers relay for Xpressbees and Ekart's web tracking.
 */
import { describe, expect, it } from 'vitest';
import { answer } from '../testutil/product.ts';
import { makePoll, scan } from '../testutil/polls.ts';

function latestOf(carrier: string, raw: string, remarks: string | null = null) {
  const record = answer(makePoll({ carrier, awb: '1234567890102', scans: [scan({ occurred_at: '2026-11-20T10:00:00', raw_status: raw, remarks, location: 'Hub' })] }));
  return record.events[0]!;
}

describe('Shree Maruti: every documented status', () => {
  it.each([
    ['NEW', null, 'order_placed', 'booked'],
    ['READY_FOR_DISPATCH', null, 'awaiting_pickup', 'booked'],
    ['IN_TRANSIT', 'Shipment picked up', 'picked_up', 'picked_up'],
    ['IN_TRANSIT', 'Received at Pune Hub', 'in_transit', 'received'],
    ['IN_TRANSIT', 'Dispatched from Ahmedabad Hub', 'in_transit', 'dispatched'],
    ['IN_TRANSIT', null, 'in_transit', 'dispatched'],
    ['OUT_FOR_DELIVERY', null, 'out_for_delivery', 'out_for_delivery'],
    ['UNDELIVERED', 'Consignee not available', 'exception', 'delivery_attempted'],
    ['RTO', null, 'returned', 'rto_initiated'],
    ['RTO_IN_TRANSIT', null, 'returned', 'dispatched'],
    ['RTO_OUT_FOR_DELIVERY', null, 'returned', 'out_for_delivery'],
    ['RTO_DELIVERED', null, 'returned', 'rto_delivered'],
    ['DELIVERED', null, 'delivered', 'delivered'],
    ['CANCELLED', null, 'cancelled', 'exception'],
  ])('%s (%s) → %s / %s', (raw, remarks, status, code) => {
    expect(latestOf('shreemaruti', raw, remarks)).toMatchObject({ status, code });
  });
});

describe('Blue Dart: upper-case texts of current answers', () => {
  it.each([
    ['SHIPMENT OUT FOR DELIVERY', 'out_for_delivery', 'out_for_delivery'],
    ["RETURNED TO ORIGIN AT SHIPPER'S REQUEST", 'returned', 'rto_initiated'],
    ['SHIPMENT DELIVERED', 'delivered', 'delivered'],
    ['SHIPMENT INSCAN', 'picked_up', 'picked_up'],
    ['CONSIGNEE REFUSED TO ACCEPT', 'exception', 'delivery_attempted'],
    ['CONSIGNEE NOT AVAILABLE;CANT DELIVER', 'exception', 'delivery_attempted'],
    ['ADDRESS INCOMPLETE, CANNOT DELIVER', 'exception', 'delivery_attempted'],
    ['RESIDENCE/OFFICE CLOSED;CANT DELIVER', 'exception', 'delivery_attempted'],
  ])('%s → %s / %s', (raw, status, code) => {
    expect(latestOf('bluedart', raw)).toMatchObject({ status, code });
  });
});

describe('Xpressbees and Ekart: texts real answers carry', () => {
  it.each([
    ['xpressbees', 'PickDone', 'picked_up', 'picked_up'],
    ['xpressbees', 'Picked Shipment InScan from Manifest', 'in_transit', 'received'],
    ['xpressbees', 'Reached at Destination Shipment BagOut From Bag', 'in_transit', 'received'],
    ['ekart', 'Shipment Created', 'awaiting_pickup', 'booked'],
    ['ekart', 'Pickup From Seller', 'picked_up', 'picked_up'],
  ])('%s: %s → %s / %s', (carrier, raw, status, code) => {
    expect(latestOf(carrier, raw)).toMatchObject({ status, code });
  });
});
