/**
 * A fixed set of polls whose normalized records and rows are pinned by digest in
 * lib/clickhouse/rows.golden.json (rows.golden.test.ts): every journey carrier in both list orders,
 * plus the awkward cases (scans sharing an instant, explicit offsets, header times, not found,
 * carrier error, an unreadable time). Speed work on normalization or rows must leave their output
 * byte-identical.
 */
import type { CarrierPoll } from '../schemas/index.ts';
import { JOURNEYS, journeyPoll, makePoll, scan } from './polls.ts';

/** A deterministic poll id (journeyPoll draws a random one). */
function pollId(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

function edgePolls(): CarrierPoll[] {
  const at = '2026-11-12T10:00:00';
  return [
    // Scans sharing an instant, one pair with the same status up to white space (one event id).
    makePoll({
      scans: [
        scan({ occurred_at: '2026-11-11T09:00:00', raw_status: 'Manifested', raw_code: 'UD' }),
        scan({ occurred_at: at, raw_status: 'Dispatched', raw_code: 'UD', remarks: 'Out for delivery', location: 'Hub A' }),
        scan({ occurred_at: at, raw_status: 'Delivered', raw_code: 'DL', location: 'Hub A' }),
        scan({ occurred_at: at, raw_status: 'In Transit', raw_code: 'XX', remarks: 'Shipment forwarded', location: 'Hub A' }),
        scan({ occurred_at: at, raw_status: 'In  Transit', raw_code: 'YY', remarks: 'Shipment forwarded', location: 'Hub B' }),
        scan({ occurred_at: at, raw_status: 'In Transit', raw_code: 'ZZ', remarks: 'Shipment forwarded', location: 'Hub A' }),
      ],
    }),
    // Explicit offsets and fractions, header times and a weight, polled_at with milliseconds.
    makePoll({
      carrier: 'bluedart',
      awb: ' ab123456789in ',
      polled_at: '2026-11-20T12:00:00.123+05:30',
      shipment: {
        origin: { office: 'Karol Bagh', city: 'New Delhi', state: 'Delhi', pincode: '110005' },
        destination: { city: 'Pune', state: null, pincode: '411001' },
        service_type: 'express',
        weight_grams: 1250,
        booked_at: '2026-11-10T09:15:00',
        estimated_delivery_at: '2026-11-14T18:00:00Z',
      },
      scans: [
        scan({ occurred_at: '2026-11-10T10:00:00.250Z', raw_status: 'SHIPMENT INSCAN', raw_code: 'PU', location: 'DELHI HUB' }),
        scan({ occurred_at: '2026-11-11T01:30:00+0530', raw_status: 'In Transit', raw_code: 'UD', location: 'NAGPUR' }),
        scan({ occurred_at: '2026-11-12T23:59', raw_status: 'Shipment Outscan', raw_code: 'UD', location: 'PUNE' }),
        scan({ occurred_at: '2026-11-13T02:00:00-01:00', raw_status: 'Shipment delivered', raw_code: 'DL', remarks: 'Received by: MR SHARMA 9876543210', location: 'PUNE' }),
      ],
    }),
    makePoll({ outcome: 'not_found', scans: [] }),
    makePoll({ outcome: 'error', error: 'carrier timed out', scans: [] }),
    makePoll({ scans: [scan({ occurred_at: '2026-13-45T99:00:00', raw_status: 'Picked Up' })] }),
    // A day past the month's end still reads as a date (rolls over), as Date.parse does.
    makePoll({ scans: [scan({ occurred_at: '2026-02-30T10:00:00', raw_status: 'Picked Up' }), scan({ occurred_at: '2026-03-02T10:00:00', raw_status: 'Delivered' })] }),
  ];
}

export function goldenPolls(): CarrierPoll[] {
  const journeys = Object.keys(JOURNEYS).flatMap((carrier) => [0, 1, 2, 3, 4].map((index) => journeyPoll(carrier, index)));
  return [...journeys, ...edgePolls()].map((poll, n) => ({ ...poll, poll_id: pollId(n) }));
}
