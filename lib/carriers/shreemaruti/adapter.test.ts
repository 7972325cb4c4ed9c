import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/shreemaruti.ts';
import type { SandboxRequest, SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { makePoll } from '../../testing/polls.ts';
import { answer } from '../../testing/product.ts';
import { fuzzParser } from '../testing/fuzz.ts';
import { recordingSend } from '../testing/recording-send.ts';
import { expectOk, normalizeAnswer, scanInstants } from '../testing/round-trip.ts';
import { asNativeResponse } from '../testing/sandbox-transport.ts';
import { eventAt, expectStepEvents, type StepEvent } from '../testing/step-events.ts';
import { AHMEDABAD_TO_PUNE, FAILED_ATTEMPT_CASES, HOUR, shipmentBuilder, storyStep } from '../testing/story.ts';
import type { HttpRequest, NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';
import { readTables } from './html-table.ts';

const AWB = '4012345070304';
/** 2026-11-16 09:00 IST. */
const START = Date.UTC(2026, 10, 16, 3, 30);

const page = (body: string, status = 200): NativeResponse => ({ status, headers: { 'content-type': 'text/html' }, body });

// ---------------------------------------------------------------- hand-written native pages

// Layout table around the result, upper-case tags, unclosed cells, entities, a <br> in a cell.
const REAL_PAGE = `<!DOCTYPE html>
<HTML><HEAD><TITLE>Shree Maruti Courier - Track</TITLE>
<script type="text/javascript">document.write('<table><tr><td>x</td></tr></table>');</script>
</HEAD><BODY>
<table width="100%" class="layout"><tr><td>
  <table class="docket-summary" border="1">
    <tr><th>Docket No.</th><td>${AWB}</td></tr>
    <tr><th>Booking Date</th><td>16/11/2026&nbsp;10:15</td></tr>
    <tr><th>Origin</th><td>Ahmedabad, Gujarat - 380001</td></tr>
    <tr><th>Destination</th><td>Pune, Maharashtra&nbsp;-&nbsp;411001</td></tr>
    <tr><th>Service</th><td>Surface</td></tr>
    <tr><th>Weight</th><td>1.250 Kg</td></tr>
    <tr><th>Expected Delivery</th><td>20/11/2026</td></tr>
  </table>
  <table class="tracking" cellpadding="3">
    <TR><TH>Date<TH>Time<TH>Location<TH>Status
    <TR><TD>16/11/2026<TD>10:15<TD>AHMEDABAD (NARODA)<TD>Booked
    <TR><TD>16-11-2026<TD>07:40 PM<TD>AHMEDABAD &amp; HUB<TD>Dispatched from Ahmedabad
    <tr><td>&nbsp;</td><td></td><td></td><td></td></tr>
    <tr><td>17/11/2026</td><td>06:05:30</td><td>PUNE</td><td><b>Received at</b> Pune&nbsp;Branch</td></tr>
    <tr><td>17/11/2026</td><td>09:30</td><td>PUNE</td><td>Out For Delivery - Agent: Vinod 9876543210</td></tr>
    <tr><td>17/11/2026</td><td>14:10</td><td>PUNE</td><td>Undelivered - Address Incorrect<br>Call customer</td></tr>
    <tr><td>18/11/2026</td><td>12:00 PM</td><td>PUNE</td><td>Delivered</td></tr>
  </table>
</td></tr></table>
</BODY></HTML>`;

const NOT_FOUND_PAGE = `<html><body><div class="container"><form method="post"><input name="docket_id"></form>
<p class="text-danger">No data found with this docket number.</p></div></body></html>`;

describe('shreemaruti HTML table reader', () => {
  it('reads cells like a browser: implicit closes, nesting, entities, scripts skipped', () => {
    const tables = readTables(REAL_PAGE);
    expect(tables.map((t) => [t.rows.length, t.closed])).toEqual([[1, true], [7, true], [8, true]]);
    expect(tables[2]!.rows[2]!.map((c) => c.text)).toEqual(['16-11-2026', '07:40 PM', 'AHMEDABAD & HUB', 'Dispatched from Ahmedabad']);
    expect(tables[2]!.rows[0]!.every((c) => c.header)).toBe(true);
  });

  it('marks a table the page never closed', () => {
    const tables = readTables('<table><tr><td>a</td><td>b');
    expect(tables).toEqual([{ rows: [[{ text: 'a', header: false }, { text: 'b', header: false }]], closed: false }]);
  });

  it('decodes numeric entities and replaces impossible code points', () => {
    const [table] = readTables('<table><tr><td>&#8377;&#x20;5 &#1114112; &bogus;</td></tr></table>');
    expect(table!.rows[0]![0]!.text).toBe('₹ 5 \uFFFD &bogus;');
  });
});

describe('shreemaruti parser on native pages', () => {
  it('reads Date / Time / Location / Status rows in page order as IST wall times', () => {
    const scans = expectOk(adapter.parse(AWB, page(REAL_PAGE))).scans;
    expect(scans.map((s) => [s.occurred_at, s.location, s.raw_status])).toEqual([
      ['2026-11-16T10:15:00', 'AHMEDABAD (NARODA)', 'Booked'],
      ['2026-11-16T19:40:00', 'AHMEDABAD & HUB', 'Dispatched from Ahmedabad'],
      ['2026-11-17T06:05:30', 'PUNE', 'Received at Pune Branch'],
      ['2026-11-17T09:30:00', 'PUNE', 'Out For Delivery'],
      ['2026-11-17T14:10:00', 'PUNE', 'Undelivered'],
      ['2026-11-18T12:00:00', 'PUNE', 'Delivered'],
    ]);
  });

  it('splits the detail after " - " into remarks', () => {
    const scans = expectOk(adapter.parse(AWB, page(REAL_PAGE))).scans;
    expect(scans[3]!.remarks).toBe('Agent: Vinod 9876543210');
    expect(scans[4]!.remarks).toBe('Address Incorrect Call customer');
    expect(scans[0]!.remarks).toBeNull();
  });

  it('reads the summary table', () => {
    const parsed = adapter.parse(AWB, page(REAL_PAGE));
    expect(parsed.outcome === 'ok' && parsed.shipment).toEqual({
      origin: { city: 'Ahmedabad', state: 'Gujarat', pincode: '380001' },
      destination: { city: 'Pune', state: 'Maharashtra', pincode: '411001' },
      service_type: 'surface',
      weight_grams: 1250,
      booked_at: '2026-11-16T10:15:00',
      estimated_delivery_at: '2026-11-20T23:59:59',
    });
  });

  it('normalizes the page into a delivered record with an address-issue attempt', () => {
    const parsed = adapter.parse(AWB, page(REAL_PAGE));
    if (parsed.outcome !== 'ok') throw new Error('expected ok');
    const record = answer(makePoll({ carrier: 'shreemaruti', awb: AWB, scans: parsed.scans, shipment: parsed.shipment }));
    expect(record.status).toBe('delivered');
    expect(record.delivered_at).toBe('2026-11-18T06:30:00.000Z');
    expect(record.delivery_attempts.attempts[0]).toMatchObject({ outcome: 'failed', reason_code: 'address_issue' });
  });

  it('answers not_found for "No data found with this docket number." and a 404', () => {
    expect(adapter.parse(AWB, page(NOT_FOUND_PAGE))).toEqual({ outcome: 'not_found' });
    const inTable = '<table><tr><th>Date</th><th>Time</th><th>Location</th><th>Status</th></tr><tr><td colspan="4">No data found with this docket number.</td></tr></table>';
    expect(adapter.parse(AWB, page(inTable))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, page('<h1>Not Found</h1>', 404))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['an empty 200', page('')],
    ['a page cut off inside the scan table', page(REAL_PAGE.slice(0, REAL_PAGE.indexOf('Delivered</td>')))],
    ['an HTML error page', page('<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>')],
    ['a 500', page('<h1>Internal Server Error</h1>', 500)],
    ['a scan row with an impossible date', page(REAL_PAGE.replace('18/11/2026</td>', '31/11/2026</td>'))],
    ['a scan row without a status', page(REAL_PAGE.replace('<td>Delivered</td>', '<td></td>'))],
    ['another docket\'s page', page(REAL_PAGE.replace(`<td>${AWB}</td>`, '<td>9999999999</td>'))],
  ])('answers error for %s', (_name, body) => {
    expect(adapter.parse(AWB, body).outcome).toBe('error');
  });

  it('survives 2000 mutations of a realistic page', () => {
    fuzzParser(adapter, AWB, page(REAL_PAGE), 2000);
  });
});

// ---------------------------------------------------------------- request shape

describe('shreemaruti fetch', () => {
  it('posts the public form with docket_id, marked idempotent', async () => {
    const { sent, send } = recordingSend(() => page(NOT_FOUND_PAGE));
    await adapter.fetch(AWB, { baseUrl: 'http://127.0.0.1:4010/shreemaruti', credentials: {} }, send);
    expect(sent).toEqual([{
      method: 'POST',
      url: 'http://127.0.0.1:4010/shreemaruti/track-your-shipment',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: `docket_id=${AWB}`,
      idempotent: true,
    }]);
  });
});

// ---------------------------------------------------------------- sandbox round trip

const step = (kind: StepKind, hour: number, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, START + hour * HOUR, location, extra);

const shipmentOf = shipmentBuilder({
  carrier: 'shreemaruti', awb: AWB, scenario: 4, lane: 3, ...AHMEDABAD_TO_PUNE,
  bookedAt: START, edd: START + 96 * HOUR, weightGrams: 500, serviceType: 'surface',
});

const formPost = (docket: string): SandboxRequest => ({
  method: 'POST', path: '/track-your-shipment', query: {}, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `docket_id=${docket}`,
});

function render(shipment: SandboxShipment): NativeResponse {
  return asNativeResponse(renderer.routes[0]!.handle(formPost(AWB), {}, () => ({ kind: 'shipment', shipment })));
}

const roundTrip = (shipment: SandboxShipment) => normalizeAnswer(adapter, AWB, render(shipment), START + 200 * HOUR);

// Bags and holds are "In Transit" scans told apart by their detail (see the renderer).
const FORWARD: [SandboxStep, StepEvent][] = [
  [step('booked', 0, 'Ahmedabad'), { code: 'booked', reason: null }],
  [step('picked_up', 5, 'Ahmedabad'), { code: 'picked_up', reason: null }],
  [step('hub_in', 8, 'Ahmedabad Hub'), { code: 'received', reason: null }],
  [step('bagged', 9, 'Ahmedabad Hub'), { code: 'bagged', reason: null }],
  [step('hub_out', 10, 'Ahmedabad Hub'), { code: 'dispatched', reason: null }],
  [step('hold', 16, 'Nashik', { remark: 'Held due to heavy rain', ndr: 'other' }), { code: 'exception', reason: 'other' }],
  [step('hub_in', 30, 'Pune Branch'), { code: 'received', reason: null }],
  [step('out_for_delivery', 33, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('attempt_failed', 38, 'Pune', { ndr: 'premises_closed' }), { code: 'delivery_attempted', reason: 'premises_closed' }],
  [step('unmapped', 45, 'Pune'), { code: 'unknown', reason: null }],
  [step('out_for_delivery', 57, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('delivered', 61, 'Pune', { remark: 'Delivered to Ramesh Kumar & family, 9876543210' }), { code: 'delivered', reason: null }],
];

describe('shreemaruti sandbox round trip', () => {
  it('maps every forward step to its event code at the right UTC instant', () => {
    const { record } = roundTrip(shipmentOf(FORWARD.map(([s]) => s)));
    expectStepEvents(record, FORWARD);
    expect(record.status).toBe('delivered');
    expect(record.delivery_attempts.count).toBe(2);
    expect(eventAt(record, FORWARD[5]![0]).status).toBe('in_transit');
  });

  it('keeps the oldest-first order, the header and the EDD', () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    const { parsed: { scans }, record } = roundTrip(shipment);
    expect(scanInstants(scans)).toEqual(shipment.steps.map((s) => s.at));
    expect(record.origin).toEqual({ office: null, ...AHMEDABAD_TO_PUNE.origin });
    expect(record.destination?.pincode).toBe('411001');
    expect(record.estimated_delivery_at).toBe(new Date(shipment.edd!).toISOString());
    expect(record.shipment).toMatchObject({ service_type: 'surface', weight_grams: 500, booked_at: new Date(START).toISOString() });
  });

  it('keeps remarks with personal data (HTML-escaped on the page) in the parsed scan', () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    expect(render(shipment).body).toContain('Delivered to Ramesh Kumar &amp; family, 9876543210');
    const { scans } = roundTrip(shipment).parsed;
    expect(scans[scans.length - 1]).toMatchObject({ raw_status: 'Delivered', remarks: 'Delivered to Ramesh Kumar & family, 9876543210' });
  });

  it.each(FAILED_ATTEMPT_CASES)('a failed attempt for %s (remark %s) gives that NDR reason', (ndr, remark) => {
    const { record } = roundTrip(shipmentOf([
      step('picked_up', 0, 'Ahmedabad'), step('out_for_delivery', 30, 'Pune'), step('attempt_failed', 34, 'Pune', { ndr, remark }),
    ]));
    expect(record.status).toBe('exception');
    expect(record.insights.current_stage).toBe('delivery_attempted');
    expect(record.delivery_attempts.attempts[0]).toMatchObject({ outcome: 'failed', reason_code: ndr });
  });

  it('maps the return journey', () => {
    const steps = [
      step('picked_up', 0, 'Ahmedabad'), step('out_for_delivery', 30, 'Pune'),
      step('attempt_failed', 34, 'Pune', { ndr: 'refused' }), step('rto_initiated', 40, 'Pune'),
      step('rto_in_transit', 50, 'Nashik'), step('rto_delivered', 70, 'Ahmedabad'),
    ];
    const inTransit = roundTrip(shipmentOf(steps.slice(0, 5))).record;
    expect([inTransit.status, inTransit.is_rto, inTransit.insights.current_stage]).toEqual(['returned', true, 'rto_in_transit']);
    expect(eventAt(inTransit, steps[3]!).code).toBe('rto_initiated');
    expect(eventAt(inTransit, steps[4]!).code).toBe('dispatched');
    const done = roundTrip(shipmentOf(steps)).record;
    expect(eventAt(done, steps[5]!).code).toBe('rto_delivered');
    expect([done.status, done.insights.current_stage]).toEqual(['returned', 'rto_delivered']);
  });

  it('maps a cancellation before pickup and a lost shipment', () => {
    const cancelled = [step('booked', 0, 'Ahmedabad'), step('cancelled', 20, 'Ahmedabad')];
    const c = roundTrip(shipmentOf(cancelled)).record;
    expect(eventAt(c, cancelled[1]!).code).toBe('exception');
    expect([c.status, c.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
    const lost = [step('picked_up', 0, 'Ahmedabad'), step('hub_in', 8, 'Nashik'), step('lost', 90, 'Nashik')];
    const l = roundTrip(shipmentOf(lost)).record;
    expect(eventAt(l, lost[2]!).code).toBe('exception');
    expect([l.status, l.insights.current_stage]).toEqual(['exception', 'exception']);
  });

  it('emits shuffled same-day scans exactly in the given order', () => {
    const given = [step('hub_out', 10, 'Ahmedabad'), step('picked_up', 5, 'Ahmedabad'), step('hub_in', 8, 'Ahmedabad'), step('booked', 0, 'Ahmedabad')];
    const { parsed: { scans }, record } = roundTrip(shipmentOf(given, { shuffled: true }));
    expect(scanInstants(scans)).toEqual(given.map((s) => s.at));
    expect(record.events.map((e) => e.code)).toEqual(['dispatched', 'received', 'picked_up', 'booked']);
  });

  it('answers the failure scenarios the carrier\'s way', () => {
    const route = renderer.routes[0]!;
    const reply = (kind: 'not_found' | 'down' | 'malformed') => adapter.parse(AWB, asNativeResponse(route.handle(formPost(AWB), {}, () => ({ kind }))));
    expect(reply('not_found')).toEqual({ outcome: 'not_found' });
    expect(reply('down')).toEqual({ outcome: 'error', error: 'HTTP 503' });
    expect(reply('malformed').outcome).toBe('error');
  });

  it('serves the adapter\'s own request, and a form without docket_id gets no table', async () => {
    const route = renderer.routes[0]!;
    const lookup = () => ({ kind: 'shipment', shipment: shipmentOf(FORWARD.map(([s]) => s)) }) as const;
    const base = 'http://127.0.0.1:4010/shreemaruti';
    const viaSandbox = async (req: HttpRequest): Promise<NativeResponse> => {
      const path = req.url.slice(base.length);
      expect([req.method, path]).toEqual([route.method, route.path]);
      const r = route.handle({ method: req.method, path, query: {}, headers: req.headers ?? {}, body: req.body ?? '' }, {}, lookup);
      return { status: r.status, headers: {}, body: r.body };
    };
    const parsed = adapter.parse(AWB, await adapter.fetch(AWB, { baseUrl: base, credentials: {} }, viaSandbox));
    expect(expectOk(parsed).scans).toHaveLength(FORWARD.length);
    const empty = route.handle({ ...formPost(''), body: '' }, {}, lookup);
    expect(adapter.parse(AWB, { status: empty.status, headers: {}, body: empty.body }).outcome).toBe('error');
  });

  it('survives 2000 mutations of a sandbox page', () => {
    fuzzParser(adapter, AWB, render(shipmentOf(FORWARD.map(([s]) => s))), 2000, 7);
  });
});
