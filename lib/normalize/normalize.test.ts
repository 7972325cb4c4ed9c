import { describe, expect, it } from 'vitest';
import { normalizePoll } from './index.ts';
import { answer, normalized, product } from '../testutil/product.ts';
import { JOURNEYS, journeyPoll, makePoll, scan } from '../testutil/polls.ts';

const at = (occurred_at: string, raw_status: string, extra: Partial<Parameters<typeof scan>[0]> = {}) =>
  scan({ occurred_at, raw_status, location: 'Delhi Hub', ...extra });

describe('time', () => {
  it('reads carrier times without an offset as IST and answers in UTC with milliseconds', () => {
    const record = answer(makePoll({ scans: [at('2026-11-20T09:15:00', 'Picked Up')] }));
    expect(record.events[0]!.timestamp).toBe('2026-11-20T03:45:00.000Z');
    expect(record.first_scan_at).toBe('2026-11-20T03:45:00.000Z');
  });

  it('keeps explicit offsets and Z, and accepts 0-3 fraction digits', () => {
    const record = answer(makePoll({
      scans: [
        at('2026-11-20T09:15:00+05:30', 'Picked Up'),
        at('2026-11-20T05:00:00Z', 'In Transit'),
        at('2026-11-20T14:31:48.7', 'Out for Delivery'),
      ],
    }));
    expect(record.events.map((e) => e.timestamp)).toEqual([
      '2026-11-20T09:01:48.700Z', '2026-11-20T05:00:00.000Z', '2026-11-20T03:45:00.000Z',
    ]);
  });

  it('converts the header EDD and booking time too', () => {
    const poll = makePoll({ scans: [at('2026-11-20T09:15:00', 'Picked Up')] });
    poll.shipment = { ...poll.shipment!, estimated_delivery_at: '2026-11-24T00:00:00', booked_at: '2026-11-19T18:00:00' };
    const record = answer(poll);
    expect(record.estimated_delivery_at).toBe('2026-11-23T18:30:00.000Z');
    expect(record.shipment.booked_at).toBe('2026-11-19T12:30:00.000Z');
  });

  it('reports a scan with an impossible time as an error, not a record', () => {
    const result = normalizePoll(makePoll({ scans: [at('2026-13-45T99:00:00', 'Picked Up')] }), product.rules);
    expect(result).toMatchObject({ kind: 'error' });
  });
});

describe('ordering and de-duplication', () => {
  it('sorts newest first even when same-day scans arrive shuffled', () => {
    const record = answer(makePoll({
      scans: [
        at('2026-11-20T14:00:00', 'Out for Delivery'),
        at('2026-11-20T08:00:00', 'Picked Up'),
        at('2026-11-20T18:00:00', 'Delivered'),
        at('2026-11-20T11:00:00', 'In Transit'),
      ],
    }));
    expect(record.events.map((e) => e.code)).toEqual(['delivered', 'out_for_delivery', 'dispatched', 'picked_up']);
    expect(record.status).toBe('delivered');
  });

  it('keeps the carrier order for equal timestamps, read in the direction the carrier lists', () => {
    const oldestFirst = answer(makePoll({
      scans: [at('2026-11-20T08:00:00', 'Picked Up'), at('2026-11-20T11:00:00', 'In Transit', { location: 'A' }), at('2026-11-20T11:00:00', 'Out for Delivery')],
    }));
    expect(oldestFirst.events.map((e) => e.code)).toEqual(['out_for_delivery', 'dispatched', 'picked_up']);
    const newestFirst = answer(makePoll({
      scans: [at('2026-11-20T11:00:00', 'Out for Delivery'), at('2026-11-20T11:00:00', 'In Transit', { location: 'A' }), at('2026-11-20T08:00:00', 'Picked Up')],
    }));
    expect(newestFirst.events.map((e) => e.code)).toEqual(['out_for_delivery', 'dispatched', 'picked_up']);
    expect(newestFirst.status).toBe('out_for_delivery');
  });

  it('shows an exact duplicate scan (time, status, location) once', () => {
    const record = answer(makePoll({
      scans: [at('2026-11-20T08:00:00', 'Picked Up'), at('2026-11-20T08:00:00', 'PICKED UP '), at('2026-11-20T08:00:00', 'Picked Up', { location: 'Other Hub' })],
    }));
    expect(record.events).toHaveLength(2);
  });

  it('gives every event a stable id and the mapping version', () => {
    const poll = makePoll({ scans: [at('2026-11-20T08:00:00', 'Picked Up')] });
    const first = answer(poll).events[0]!;
    const again = answer({ ...poll, poll_id: crypto.randomUUID() }).events[0]!;
    expect(first.event_id).toBe(again.event_id);
    expect(first.mapping_version).toBe(product.rules.mappingVersion);
    expect(product.rules.mappingVersion).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('unmapped scans', () => {
  it('keeps the previous status, gets code unknown and is counted, never dropped', () => {
    const poll = makePoll({
      scans: [at('2026-11-20T08:00:00', 'Picked Up'), at('2026-11-20T12:00:00', 'Shipment sent for sanitisation')],
    });
    const { record, facts } = normalized(poll);
    expect(record.events[0]).toMatchObject({ code: 'unknown', status: 'picked_up', status_text: 'Shipment sent for sanitisation' });
    expect(record.status).toBe('picked_up');
    expect(facts.unmapped_scans).toBe(1);
    expect(record.last_updated_at).toBe('2026-11-20T06:30:00.000Z');
  });

  it('an unmapped first scan is pending and awaiting pickup', () => {
    const record = answer(makePoll({ scans: [at('2026-11-20T08:00:00', 'Zzz mystery')] }));
    expect(record.status).toBe('pending');
    expect(record.insights.current_stage).toBe('awaiting_pickup');
  });
});

describe('failed attempts and NDR reasons', () => {
  it('a failed attempt is exception / delivery_attempted with a reason, not terminal, not RTO', () => {
    const record = answer(makePoll({
      scans: [
        at('2026-11-20T08:00:00', 'Picked Up'),
        at('2026-11-21T09:00:00', 'Out for Delivery'),
        at('2026-11-21T13:00:00', 'Undelivered', { remarks: 'Consignee Unavailable' }),
      ],
    }), '2026-11-21T12:00:00.000Z');
    expect(record).toMatchObject({ status: 'exception', is_rto: false, is_delivered: false });
    expect(record.events[0]).toMatchObject({ code: 'delivery_attempted', reason_code: 'customer_unavailable' });
    expect(record.delivery_attempts).toEqual({
      count: 1,
      attempts: [{ at: '2026-11-21T07:30:00.000Z', outcome: 'failed', reason_code: 'customer_unavailable', reason_text: 'Consignee Unavailable' }],
    });
    expect(record.insights).toMatchObject({ current_stage: 'delivery_attempted', requires_attention: true, attention_reason: 'failed_attempt' });
    expect(record.milestones.first_attempt_at).toBe('2026-11-21T07:30:00.000Z');
  });

  it('an attempt then a delivery counts two attempts', () => {
    const record = answer(makePoll({
      scans: [
        at('2026-11-20T08:00:00', 'Picked Up'),
        at('2026-11-21T13:00:00', 'Undelivered', { remarks: 'Door Locked' }),
        at('2026-11-22T11:00:00', 'Delivered'),
      ],
    }));
    expect(record.delivery_attempts.count).toBe(2);
    expect(record.delivery_attempts.attempts.map((a) => [a.outcome, a.reason_code])).toEqual([['failed', 'premises_closed'], ['delivered', null]]);
    expect(record.insights.requires_attention).toBe(false);
    expect(record.delivered_at).toBe('2026-11-22T05:30:00.000Z');
  });

  // carrier-formats.md "Failed-delivery remarks seen, by NDR reason", plus realistic variants.
  it.each([
    ['Consignee Unavailable', 'customer_unavailable'],
    ['CONSIGNEE NOT AVAILABLE;CANT DELIVER', 'customer_unavailable'],
    ['Shipment attempted - Customer not available', 'customer_unavailable'],
    ['PARTY NOT AVAILABLE', 'customer_unavailable'],
    ['Addressee Absent', 'customer_unavailable'],
    ['Customer phone switched off, not reachable', 'customer_unavailable'],
    ['Bad/Incomplete Address', 'address_issue'],
    ['ADDRESS INCOMPLETE, CANNOT DELIVER', 'address_issue'],
    ['Address Incorrect', 'address_issue'],
    ['ADDRESS NOT FOUND', 'address_issue'],
    ['Wrong pincode mentioned', 'address_issue'],
    ['Customer Refused to accept/Order Cancelled', 'refused'],
    ['CONSIGNEE REFUSED TO ACCEPT', 'refused'],
    ['Shipment attempted - Customer refused to accept', 'refused'],
    ['Customer rejected COD payment', 'refused'],
    ['Office/Institute closed', 'premises_closed'],
    ['RESIDENCE/OFFICE CLOSED;CANT DELIVER', 'premises_closed'],
    ['Residence/Office Closed', 'premises_closed'],
    ['Door Locked', 'premises_closed'],
    ['Payment not ready with customer', 'cod_not_ready'],
    ['COD amount not ready', 'cod_not_ready'],
    ['Not attempted', 'other'],
    ['OTP code mismatch', 'other'],
    ['No Id Proof', 'other'],
    ['Heavy rain, delivery delayed', 'other'],
    ['', 'other'],
  ])('remark %j → %s', (remark, reason) => {
    expect(product.rules.ndrReason(remark)).toBe(reason);
  });
});

describe('returns, cancellations and exceptions', () => {
  it('RTO started is returned / rto_initiated / rto_in_transit, and not terminal', () => {
    const record = answer(makePoll({
      scans: [
        at('2026-11-18T08:00:00', 'Picked Up'),
        at('2026-11-19T13:00:00', 'Undelivered', { remarks: 'Consignee Unavailable' }),
        at('2026-11-20T13:00:00', 'Return to Origin'),
        at('2026-11-20T18:00:00', 'In Transit', { raw_code: 'RT', location: 'Return Hub' }),
      ],
    }));
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_in_transit');
    expect(record.insights.hours_since_last_scan).not.toBeNull();
    expect(record.milestones.rto_initiated_at).toBe('2026-11-20T07:30:00.000Z');
    expect(record.delivery_attempts.count).toBe(1);
  });

  it('a return-leg code alone starts the return, and its delivery is rto_delivered (terminal)', () => {
    const record = answer(makePoll({
      scans: [
        at('2026-11-18T08:00:00', 'Picked Up'),
        at('2026-11-20T13:00:00', 'In Transit', { raw_code: 'RT' }),
        at('2026-11-22T13:00:00', 'Delivered', { raw_code: 'RT', location: 'Seller WH' }),
      ],
    }), '2026-11-25T00:00:00.000Z');
    expect(record.events.map((e) => e.code)).toEqual(['rto_delivered', 'rto_initiated', 'picked_up']);
    expect(record).toMatchObject({ status: 'returned', is_rto: true, is_delivered: false, delivered_at: null });
    expect(record.insights).toMatchObject({ current_stage: 'rto_delivered', hours_since_last_scan: null, is_stuck: false });
    expect(record.milestones.rto_delivered_at).toBe('2026-11-22T07:30:00.000Z');
  });

  it('cancelled before pickup is cancelled (status and stage), terminal, never stuck', () => {
    const record = answer(makePoll({
      scans: [at('2026-11-01T08:00:00', 'Manifested'), at('2026-11-02T08:00:00', 'Not Picked: cancelled by seller')],
    }), '2026-11-20T00:00:00.000Z');
    expect(record.status).toBe('cancelled');
    expect(record.insights).toMatchObject({ current_stage: 'cancelled', is_stuck: false, hours_since_last_scan: null, requires_attention: false });
    expect(record.milestones.picked_up_at).toBeNull();
  });

  it('a lost shipment is an exception needing attention', () => {
    const record = answer(makePoll({ carrier: 'shiprocket', scans: [at('2026-11-20T08:00:00', 'Picked Up', { raw_code: '42' }), at('2026-11-20T12:00:00', 'Shipment Lost', { raw_code: '12' })] }));
    expect(record.status).toBe('exception');
    expect(record.events[0]!.code).toBe('exception');
    expect(record.insights).toMatchObject({ current_stage: 'exception', requires_attention: true, attention_reason: 'exception' });
  });

  it('a carrier-side hold records NDR other but keeps the shipment moving', () => {
    const record = answer(makePoll({ carrier: 'dtdc', scans: [
      at('2026-11-20T08:00:00', 'BOOKED', { raw_code: 'BKD' }),
      at('2026-11-20T12:00:00', 'HELDUP', { raw_code: 'HLD', remarks: 'Held due to heavy rain' }),
      at('2026-11-20T18:00:00', 'DISPATCHED', { raw_code: 'OBMD' }),
    ] }));
    expect(record.events[1]).toMatchObject({ code: 'exception', reason_code: 'other', status: 'in_transit' });
    expect(record.status).toBe('in_transit');
    expect(record.insights.requires_attention).toBe(false);
  });

  it('a delivered shipment stays delivered when a late informational scan follows', () => {
    const record = answer(makePoll({ scans: [at('2026-11-20T08:00:00', 'Delivered'), at('2026-11-20T09:00:00', 'In Transit')] }));
    expect(record.status).toBe('delivered');
    expect(record.status_text).toBe('Delivered');
  });
});

describe('carrier quirks', () => {
  it('delhivery: Scan "Dispatched" with an out-for-delivery instruction is out for delivery', () => {
    const record = answer(makePoll({ scans: [at('2026-11-20T08:00:00', 'Dispatched', { remarks: 'Out for delivery' })] }));
    expect(record.events[0]!.code).toBe('out_for_delivery');
  });

  it('delhivery: In Transit scans take their meaning from the instruction', () => {
    const record = answer(makePoll({ scans: [
      at('2026-11-20T08:00:00', 'In Transit', { remarks: 'Shipment picked up' }),
      at('2026-11-20T10:00:00', 'In Transit', { remarks: 'Shipment Recieved at Origin Center' }),
      at('2026-11-20T11:00:00', 'In Transit', { remarks: 'Added to Bag' }),
    ] }));
    expect(record.events.map((e) => e.code)).toEqual(['bagged', 'received', 'picked_up']);
  });

  it('postal: labels with trailing spaces or glued to their detail still match', () => {
    const record = answer(makePoll({ carrier: 'indiapost', awb: 'RK123456789IN', scans: [
      at('2026-11-20T08:00:00', 'Item BookItem Book At Dhule Jaihind Colony S.O'),
      at('2026-11-20T12:00:00', 'Item Bagged  '),
    ] }));
    expect(record.events.map((e) => [e.code, e.status_text])).toEqual([['bagged', 'Item Bagged'], ['booked', 'Item BookItem Book At Dhule Jaihind Colony S.O']]);
  });

  it('shiprocket: sr-status codes decide, text is the fallback for "NA"', () => {
    const record = answer(makePoll({ carrier: 'shiprocket', scans: [
      at('2026-11-20T08:00:00', 'Something odd', { raw_code: '42' }),
      at('2026-11-20T12:00:00', 'Out For Delivery', { raw_code: 'NA' }),
    ] }));
    expect(record.events.map((e) => e.code)).toEqual(['out_for_delivery', 'picked_up']);
  });

  it('every carrier journey of ten scans normalizes to a delivered record', () => {
    for (const carrier of Object.keys(JOURNEYS)) {
      const record = answer(journeyPoll(carrier, 1));
      expect(record.status, carrier).toBe('delivered');
      expect(record.events, carrier).toHaveLength(10);
      expect(record.events.filter((e) => e.code === 'unknown'), carrier).toEqual([]);
      expect(record.delivery_attempts.count, carrier).toBeGreaterThanOrEqual(2);
    }
    expect(Object.keys(JOURNEYS).sort()).toEqual(product.registry.slugs().sort());
  });
});

describe('record fields', () => {
  it('fills header, milestones, locations and echoes the AWB uppercased', () => {
    const record = answer(makePoll({ awb: 'ab1234cd', scans: [
      at('2026-11-19T08:00:00', 'Manifested', { location: 'Seller' }),
      at('2026-11-20T08:00:00', 'Picked Up', { location: 'Delhi_Bilaspur_HB (Haryana)' }),
      at('2026-11-20T20:00:00', 'In Transit', { location: null }),
    ] }));
    expect(record).toMatchObject({
      awb: 'AB1234CD', tracking_number: 'AB1234CD', carrier: 'delhivery', is_delivered: false,
      origin: { pincode: '110001' }, destination: { pincode: '560001' },
      last_location: 'Delhi Bilaspur HB (Haryana)', last_known_location: 'Delhi Bilaspur HB (Haryana)',
      last_polled_at: '2026-11-20T12:00:00.000Z', cached: false, stale: false,
    });
    expect(record.milestones).toMatchObject({
      booked_at: '2026-11-19T02:30:00.000Z', picked_up_at: '2026-11-20T02:30:00.000Z', in_transit_at: '2026-11-20T14:30:00.000Z',
      out_for_delivery_at: null, delivered_at: null,
    });
    expect(record.events[0]!.facility).toBe('');
    expect(record.shipment).toMatchObject({ service_type: 'surface', weight_grams: 500 });
  });

  it('not found and error outcomes give no record', () => {
    expect(normalizePoll(makePoll({ outcome: 'not_found', scans: [] }), product.rules)).toEqual({ kind: 'not_found' });
    expect(normalizePoll(makePoll({ scans: [] }), product.rules)).toEqual({ kind: 'not_found' });
    expect(normalizePoll(makePoll({ outcome: 'error', error: 'HTTP 503', scans: [] }), product.rules)).toEqual({ kind: 'error', error: 'HTTP 503' });
  });
});

describe('personal data', () => {
  it('is removed from every text field of the output', () => {
    const record = answer(makePoll({ scans: [
      at('2026-11-20T08:00:00', 'Picked Up', { remarks: 'Pickup by agent, call 98765 43210', location: 'Delhi Hub' }),
      at('2026-11-21T09:00:00', 'Out for Delivery', { remarks: 'Agent Suresh +91-98765-43210, share OTP 482913 with agent' }),
      at('2026-11-21T12:00:00', 'Undelivered', { remarks: 'Customer not available, mail sent to priya.sharma@gmail.com, loc 28.6139,77.2090' }),
      at('2026-11-22T12:00:00', 'Delivered', { remarks: 'Delivered to Ramesh Kumar (Self), received by Priya, 09876543210' }),
    ] }));
    const text = JSON.stringify(record);
    for (const leaked of ['98765', '43210', '482913', 'priya.sharma', 'gmail', '28.6139', '77.2090', 'Ramesh', 'Kumar']) {
      expect(text, leaked).not.toContain(leaked);
    }
    expect(text).toContain('[redacted]');
    expect(record.delivery_attempts.attempts[0]!.reason_text).toContain('[redacted]');
  });
});
