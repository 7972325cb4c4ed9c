/**
 * Shree Maruti's sandbox: the public tracking page answering a form post of `docket_id` with an HTML
 * summary table and a Date / Time / Location / Status table, oldest scan first (see
 * lib/carriers/shreemaruti/adapter.ts for the decided details of this *unconfirmed* format).
 */
import { istParts } from '../ist.ts';
import type { SandboxReply, SandboxRenderer, SandboxShipment, SandboxStep, ScenarioAnswer } from '../types.ts';
import { withDetail } from './shared.ts';

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const html = (status: number, body: string): SandboxReply => ({ status, contentType: 'text/html; charset=utf-8', body });

const PAGE_HEAD = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Track Your Shipment | Shree Maruti Courier Services</title>
<script>var emptyRow = '<tr><td colspan="4"></td></tr>';</script></head>
<body>
<div class="container track-page">
<h2>Track Your Shipment</h2>
<form method="post" action="/track-your-shipment"><input type="text" name="docket_id"><button type="submit">Track</button></form>
`;
const PAGE_TAIL = `
</div>
<footer>&copy; Shree Maruti Integrated Logistics Ltd.</footer>
</body>
</html>
`;

const page = (content: string) => PAGE_HEAD + content + PAGE_TAIL;

const HISTORY_HEAD = `<table class="table table-striped tracking-history">
  <thead><tr><th>Date</th><th>Time</th><th>Location</th><th>Status</th></tr></thead>
  <tbody>
`;

// ---------------------------------------------------------------- the site's vocabulary

const ATTEMPT_REMARK: Record<string, string> = {
  customer_unavailable: 'Consignee Not Available',
  address_issue: 'Address Incorrect',
  refused: 'Consignee Refused to Accept',
  premises_closed: 'Premises Closed',
  cod_not_ready: 'COD Amount Not Ready',
  other: 'Not Attempted',
};

/**
 * One step as the site's status cell writes it (texts config/mappings/shreemaruti.yaml maps). Bag
 * scans and holds are "In Transit" with the detail attached; the rules tell them apart by it.
 */
function statusText(step: SandboxStep): string {
  switch (step.kind) {
    case 'booked': return withDetail('Booked', step.remark);
    case 'picked_up': return withDetail('Picked Up', step.remark);
    case 'hub_in': return withDetail(`Received at ${step.location}`, step.remark);
    case 'hub_out': return withDetail(`Dispatched from ${step.location}`, step.remark);
    case 'bagged': return withDetail('In Transit', step.remark ?? `Bagged at ${step.location}`);
    case 'out_for_delivery': return withDetail('Out For Delivery', step.remark);
    case 'attempt_failed':
      return withDetail('Undelivered', step.remark ?? (step.ndr ? ATTEMPT_REMARK[step.ndr] ?? null : null));
    case 'delivered': return withDetail('Delivered', step.remark);
    case 'hold': return withDetail('In Transit', step.remark ?? 'Held due to operational delay');
    case 'rto_initiated': return withDetail('RTO Initiated', step.remark);
    case 'rto_in_transit': return withDetail('RTO In Transit', step.remark);
    case 'rto_delivered': return withDetail('RTO Delivered', step.remark);
    case 'cancelled': return withDetail('Docket Cancelled', step.remark);
    case 'lost': return withDetail('Shipment Lost', step.remark);
    case 'unmapped': return withDetail('Shipment sent for sanitisation', step.remark);
  }
}

function siteDate(ms: number): { date: string; time: string } {
  const p = istParts(ms);
  return { date: `${p.day}/${p.month}/${p.year}`, time: `${p.hour}:${p.minute}` };
}

const SERVICE_NAMES: Record<SandboxShipment['serviceType'], string> = {
  surface: 'Surface',
  express: 'Air Express',
  speed_post: 'Air Express',
};

const placeText = (place: SandboxShipment['origin']) => `${place.city}, ${place.state} - ${place.pincode}`;

function summaryTable(shipment: SandboxShipment): string {
  const booked = siteDate(shipment.bookedAt);
  const edd = shipment.edd === null ? null : siteDate(shipment.edd);
  const rows: [string, string][] = [
    ['Docket No.', shipment.awb],
    ['Booking Date', `${booked.date} ${booked.time}`],
    ['Origin', placeText(shipment.origin)],
    ['Destination', placeText(shipment.destination)],
    ['Service', SERVICE_NAMES[shipment.serviceType]],
    ['Weight', `${(shipment.weightGrams / 1000).toFixed(3)} Kg`],
    ['Expected Delivery', edd ? `${edd.date} ${edd.time}` : '-'],
  ];
  const body = rows.map(([label, value]) => `  <tr><th>${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`).join('\n');
  return `<table class="table table-bordered docket-summary">\n${body}\n</table>`;
}

function historyTable(shipment: SandboxShipment): string {
  // The site lists the oldest scan first, unless the scenario shuffles the order.
  const rows = shipment.steps.map((step) => {
    const { date, time } = siteDate(step.at);
    const cells = [date, time, step.location, statusText(step)].map((text) => `<td>${escapeHtml(text)}</td>`).join('');
    return `    <tr>${cells}</tr>`;
  });
  return `${HISTORY_HEAD}${rows.join('\n')}
  </tbody>
</table>`;
}

export function shipmentPage(shipment: SandboxShipment): string {
  return page(`<div class="track-result">\n${summaryTable(shipment)}\n${historyTable(shipment)}\n</div>`);
}

function reply(answer: ScenarioAnswer): SandboxReply {
  switch (answer.kind) {
    case 'shipment':
    case 'slow':
      return html(200, shipmentPage(answer.shipment));
    case 'not_found':
      return html(200, page('<div class="alert alert-danger">No data found with this docket number.</div>'));
    case 'down':
      return html(503, '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>');
    case 'malformed':
      // The page breaks off inside the scan table, as when the site's worker dies mid-answer.
      return html(200, `${PAGE_HEAD}<div class="track-result">\n${HISTORY_HEAD}    <tr><td>18/11/2026</td><td>10:15</td><td>Ahmeda`);
  }
}

export const renderer: SandboxRenderer = {
  slug: 'shreemaruti',
  routes: [{
    method: 'POST',
    path: '/track-your-shipment',
    // A public page: no credentials, only the form field.
    handle(req, _params, lookup) {
      const docket = new URLSearchParams(req.body).get('docket_id')?.trim() ?? '';
      if (docket === '') return html(200, page('<div class="alert alert-warning">Please enter a valid docket number.</div>'));
      return reply(lookup(docket));
    },
  }],
};
