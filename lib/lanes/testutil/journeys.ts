/**
 * Seeded closed-shipment polls for tests of lane statistics (never used by the product): Delhivery
 * journeys that are delivered (on time or late, first attempt or after failed ones), returned to
 * origin, or cancelled, on a few lanes, closing at chosen instants.
 */
import { randomUUID } from 'node:crypto';
import type { CarrierPoll, RawScan } from '../../schemas/index.ts';
import { HOUR_MS as HOUR } from '../../time/index.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export interface JourneySpec {
  awb: string;
  origin: string;
  destination: string;
  outcome: 'delivered' | 'rto' | 'cancelled';
  /** When the terminal scan happens (epoch ms, whole seconds). */
  closedAtMs: number;
  /** Pickup → delivery (delivered) or → return to origin, in hours. */
  transitHours: number;
  /** Failed attempts before the end, by remark (FAILED_ATTEMPT_REMARKS text). */
  failedRemarks: string[];
  /** Carrier EDD (epoch ms) or null. */
  eddMs: number | null;
}

function s(occurredMs: number, raw_status: string, raw_code: string, remarks: string | null = null): RawScan {
  return { occurred_at: iso(occurredMs), raw_status, raw_code, remarks, location: 'Hub' };
}

/** The carrier_poll.v1 of a closed journey, polled an hour after it closed. */
export function journeyPoll(spec: JourneySpec): CarrierPoll {
  const end = spec.closedAtMs;
  const pickup = end - spec.transitHours * HOUR;
  const scans: RawScan[] = [s(pickup - 2 * HOUR, 'Manifested', 'UD')];
  if (spec.outcome === 'cancelled') {
    scans.push(s(end, 'Not Picked: cancelled by seller', 'CN'));
  } else {
    scans.push(s(pickup, 'Picked Up', 'PU'));
    // Failed attempts spread between pickup and the end.
    spec.failedRemarks.forEach((remark, i) => {
      scans.push(s(pickup + ((i + 1) * (end - pickup)) / (spec.failedRemarks.length + 2), 'Undelivered', 'UD', remark));
    });
    if (spec.outcome === 'delivered') scans.push(s(end, 'Delivered', 'DL'));
    else {
      scans.push(s(end - HOUR, 'Return to Origin', 'RT'));
      scans.push(s(end, 'RTO Delivered', 'RT'));
    }
  }
  return {
    schema: 'carrier_poll.v1',
    poll_id: randomUUID(),
    carrier: 'delhivery',
    awb: spec.awb,
    polled_at: iso(end + HOUR),
    source: 'poller',
    outcome: 'ok',
    shipment: {
      origin: { city: 'Origin', state: null, pincode: spec.origin },
      destination: { city: 'Destination', state: null, pincode: spec.destination },
      service_type: 'surface',
      weight_grams: 500,
      booked_at: null,
      estimated_delivery_at: spec.eddMs === null ? null : iso(spec.eddMs),
    },
    scans,
    error: null,
  };
}

export const NDR_REMARKS = [
  'Consignee Unavailable', 'ADDRESS NOT FOUND', 'CONSIGNEE REFUSED TO ACCEPT', 'Door Locked', 'Payment not ready with customer',
  'Not attempted, vehicle breakdown',
];
