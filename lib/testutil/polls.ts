/** Builders of `carrier_poll.v1` records for tests and benchmarks (not used by the product). */
import { randomUUID } from 'node:crypto';
import type { CarrierPoll, PollShipment, RawScan } from '../schemas/index.ts';
import { HOUR_MS, IST_OFFSET_MS } from '../time/index.ts';

export type ScanInput = Partial<RawScan> & { raw_status: string; occurred_at: string };

export function scan(input: ScanInput): RawScan {
  return { raw_code: null, remarks: null, location: null, ...input };
}

export const DELHI_TO_BENGALURU: Pick<PollShipment, 'origin' | 'destination'> = {
  origin: { city: 'New Delhi', state: 'Delhi', pincode: '110001' },
  destination: { city: 'Bengaluru', state: 'Karnataka', pincode: '560001' },
};

export function makePoll(overrides: Partial<CarrierPoll> & { scans: RawScan[] }): CarrierPoll {
  return {
    schema: 'carrier_poll.v1',
    poll_id: randomUUID(),
    carrier: 'delhivery',
    awb: '1234567890102',
    polled_at: '2026-11-20T12:00:00.000Z',
    source: 'lookup',
    outcome: 'ok',
    shipment: {
      ...DELHI_TO_BENGALURU,
      service_type: 'surface',
      weight_grams: 500,
      booked_at: null,
      estimated_delivery_at: null,
    },
    error: null,
    ...overrides,
  };
}

/** One step of a typical journey: raw text as the carrier writes it, with code and remarks. */
interface JourneyStep {
  raw_status: string;
  raw_code?: string;
  remarks?: string;
}

/** Ten-scan delivered journeys in each carrier's own vocabulary (see config/mappings). */
export const JOURNEYS: Record<string, JourneyStep[]> = {
  delhivery: [
    { raw_status: 'Manifested', raw_code: 'UD', remarks: 'Consignment Manifested' },
    { raw_status: 'In Transit', raw_code: 'UD', remarks: 'Shipment picked up' },
    { raw_status: 'In Transit', raw_code: 'UD', remarks: 'Shipment Recieved at Origin Center' },
    { raw_status: 'In Transit', raw_code: 'UD', remarks: 'Added to Bag' },
    { raw_status: 'In Transit', raw_code: 'UD', remarks: 'Bag Received at Facility' },
    { raw_status: 'In Transit', raw_code: 'UD', remarks: 'Shipment forwarded' },
    { raw_status: 'Pending', raw_code: 'UD', remarks: 'Consignee Unavailable' },
    { raw_status: 'Undelivered', raw_code: 'UD', remarks: 'Consignee Unavailable' },
    { raw_status: 'Dispatched', raw_code: 'UD', remarks: 'Out for delivery' },
    { raw_status: 'Delivered', raw_code: 'DL', remarks: 'Delivered to Ramesh Kumar, OTP 4821' },
  ],
  bluedart: [
    { raw_status: 'Manifested', raw_code: 'PU' },
    { raw_status: 'SHIPMENT INSCAN', raw_code: 'PU' },
    { raw_status: 'Arrived at Hub', raw_code: 'UD' },
    { raw_status: 'SHIPMENT OUTSCANNED TO NETWORK', raw_code: 'UD' },
    { raw_status: 'In Transit', raw_code: 'UD' },
    { raw_status: 'Dispatched to Destination', raw_code: 'UD' },
    { raw_status: 'Shipment Outscan', raw_code: 'UD' },
    { raw_status: 'CONSIGNEE NOT AVAILABLE;CANT DELIVER', raw_code: 'UD' },
    { raw_status: 'Shipment Outscan', raw_code: 'UD' },
    { raw_status: 'Shipment delivered', raw_code: 'DL', remarks: 'Received by: MR SHARMA 9876543210' },
  ],
  dtdc: [
    { raw_status: 'BOOKED', raw_code: 'BKD' },
    { raw_status: 'DISPATCHED', raw_code: 'CDOUT' },
    { raw_status: 'RECEIVED', raw_code: 'CDIN' },
    { raw_status: 'DISPATCHED', raw_code: 'OBMD' },
    { raw_status: 'RECEIVED', raw_code: 'IBMD' },
    { raw_status: 'HELDUP', raw_code: 'HLD', remarks: 'Heavy rain in the area' },
    { raw_status: 'CONSIGNMENT RELEASED', raw_code: 'REL' },
    { raw_status: 'OUT FOR DELIVERY', raw_code: 'OUTDLV' },
    { raw_status: 'NOT DELIVERED', raw_code: 'NONDLV', remarks: 'RESIDENCE/OFFICE CLOSED;CANT DELIVER' },
    { raw_status: 'DELIVERED', raw_code: 'DLV' },
  ],
  shiprocket: [
    { raw_status: 'Shipment Booked', raw_code: '52' },
    { raw_status: 'Shipped', raw_code: '6' },
    { raw_status: 'Picked Up', raw_code: '42' },
    { raw_status: 'In Transit', raw_code: '18' },
    { raw_status: 'Delayed', raw_code: '22', remarks: 'Delay due to weather' },
    { raw_status: 'Reached at Destination Hub', raw_code: '38' },
    { raw_status: 'Out For Delivery', raw_code: '17' },
    { raw_status: 'Undelivered', raw_code: '21', remarks: 'Customer Refused to accept/Order Cancelled' },
    { raw_status: 'Out For Delivery', raw_code: 'NA' },
    { raw_status: 'Delivered', raw_code: '7' },
  ],
  shreemaruti: [
    { raw_status: 'Booked' },
    { raw_status: 'Picked Up' },
    { raw_status: 'In Transit' },
    { raw_status: 'Reached at Ahmedabad Hub' },
    { raw_status: 'Forwarded to Pune' },
    { raw_status: 'Received at Pune Branch' },
    { raw_status: 'Out For Delivery' },
    { raw_status: 'Undelivered - Address Incorrect' },
    { raw_status: 'Out For Delivery' },
    { raw_status: 'Delivered' },
  ],
  indiapost: [
    { raw_status: 'Item Booked ' },
    { raw_status: 'Item Bagged ' },
    { raw_status: 'Item Dispatched' },
    { raw_status: 'Item Received' },
    { raw_status: 'Item Bagged ' },
    { raw_status: 'Item Despatched' },
    { raw_status: 'Item Received' },
    { raw_status: 'Out for Delivery' },
    { raw_status: 'Door Locked' },
    { raw_status: 'Item Delivered' },
  ],
  speedpost: [
    { raw_status: 'Item BookItem Book At Dhule Jaihind Colony S.O' },
    { raw_status: 'Item Bagged ' },
    { raw_status: 'Item Dispatched' },
    { raw_status: 'Item Received' },
    { raw_status: 'Item Bagged ' },
    { raw_status: 'Item Dispatched' },
    { raw_status: 'Item Received' },
    { raw_status: 'Out for Delivery' },
    { raw_status: 'Addressee Absent' },
    { raw_status: 'Article Delivered' },
  ],
  xpressbees: [
    { raw_status: 'Data Received' },
    { raw_status: 'Picked Up' },
    { raw_status: 'In Transit' },
    { raw_status: 'In Transit' },
    { raw_status: 'Reached At Destination' },
    { raw_status: 'Out for Delivery', remarks: 'Agent Suresh (+91 98765 43210)' },
    { raw_status: 'Undelivered', remarks: 'Payment not ready with customer' },
    { raw_status: 'Reached At Destination' },
    { raw_status: 'Out for Delivery', remarks: 'Agent Suresh (+91 98765 43210)' },
    { raw_status: 'Delivered' },
  ],
  shadowfax: [
    { raw_status: 'New', raw_code: 'new' },
    { raw_status: 'Picked', raw_code: 'picked' },
    { raw_status: 'Received at forward hub', raw_code: 'recd_at_fwd_hub' },
    { raw_status: 'Bag in transit', raw_code: 'bag_in_transit' },
    { raw_status: 'On hold', raw_code: 'on_hold', remarks: 'Vehicle breakdown' },
    { raw_status: 'Received at DC', raw_code: 'recd_at_fwd_dc' },
    { raw_status: 'Out for delivery', raw_code: 'ofd' },
    { raw_status: 'Customer not available', raw_code: 'na', remarks: 'PARTY NOT AVAILABLE' },
    { raw_status: 'Out for delivery', raw_code: 'ofd' },
    { raw_status: 'Delivered', raw_code: 'delivered' },
  ],
  ekart: [
    { raw_status: 'shipment_created' },
    { raw_status: 'shipment_picked_up' },
    { raw_status: 'shipment_received_at_hub' },
    { raw_status: 'shipment_dispatched' },
    { raw_status: 'shipment_received_at_hub' },
    { raw_status: 'shipment_dispatched' },
    { raw_status: 'shipment_out_for_delivery' },
    { raw_status: 'shipment_undelivered_attempted', remarks: 'Office/Institute closed' },
    { raw_status: 'shipment_out_for_delivery' },
    { raw_status: 'shipment_delivered' },
  ],
  professionalcouriers: [
    { raw_status: 'Booked at Pondicherry' },
    { raw_status: 'Bag Despatched to Chennai Hub' },
    { raw_status: 'Received at Chennai Hub' },
    { raw_status: 'Despatched to Tiruvannamalai - MTP' },
    { raw_status: 'Received at Tiruvannamalai' },
    { raw_status: 'outfordelivery: Out for Delivery - Area' },
    { raw_status: 'Address Improper - Area' },
    { raw_status: 'Received at Tiruvannamalai' },
    { raw_status: 'Out for Delivery - Area' },
    { raw_status: 'delivered: Delivered - Area' },
  ],
};

const HUBS = ['Delhi_Bilaspur_HB (Haryana)', 'Jaipur Hub', 'Nagpur Gateway', 'Hyderabad Hub', 'Bengaluru_Nelmngla_H (Karnataka)'];

/** A delivered ten-scan poll of `carrier`, scans an hour or more apart, IST times without offset. */
export function journeyPoll(carrier: string, index: number, startMs = Date.UTC(2026, 10, 10, 4, 30)): CarrierPoll {
  const steps = JOURNEYS[carrier];
  if (!steps) throw new Error(`no journey for ${carrier}`);
  const istMs = startMs + IST_OFFSET_MS;
  const scans = steps.map((step, i) => scan({
    occurred_at: new Date(istMs + (i * 7 + (index % 5)) * HOUR_MS).toISOString().slice(0, 19),
    raw_status: step.raw_status,
    raw_code: step.raw_code ?? null,
    remarks: step.remarks ?? null,
    location: HUBS[Math.min(HUBS.length - 1, Math.floor(i / 2))]!,
  }));
  // Carriers list newest first more often than not.
  if (index % 2 === 0) scans.reverse();
  return makePoll({
    carrier,
    awb: `${String(100000000000 + index)}04`,
    polled_at: new Date(startMs + 80 * HOUR_MS).toISOString(),
    scans,
  });
}
