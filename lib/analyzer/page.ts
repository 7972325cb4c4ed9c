/**
 * The shared report page: one HTML document with the figures as server-rendered SVG charts and
 * inline styles only — no script, font, stylesheet or image from anywhere (the API's HTML
 * Content-Security-Policy, apps/api/http/hardening.ts, allows its own origin only), so a colleague's
 * browser asks nothing of another host. Pure.
 */
import type { AnalysisDoc } from './store.ts';
import { MIN_OWN_SHIPMENTS } from './recommend.ts';
import type { Group, Report } from './types.ts';
import { escapeHtml } from '../html/index.ts';

const esc = (value: unknown) => escapeHtml(String(value));
const pct = (r: number | null) => (r === null ? '–' : `${(r * 100).toFixed(1)}%`);
const days = (d: number | null) => (d === null ? '–' : d.toFixed(1));

const COLORS = { delivered: '#2e7d32', rto: '#c62828', cancelled: '#9e9e9e', exception: '#6a1b9a', in_transit: '#1565c0', pending: '#f9a825' } as const;
const OUTCOME_KEYS = Object.keys(COLORS) as (keyof typeof COLORS)[];

/** Horizontal stacked bars: each group's shipments by outcome. */
function outcomeChart(title: string, rows: { label: string; group: Group }[]): string {
  if (rows.length === 0) return '';
  const shown = rows.slice(0, 12);
  const width = 640, labelW = 170, barW = width - labelW - 60, rowH = 26;
  const height = shown.length * rowH + 40;
  const bars = shown.map(({ label, group }, i) => {
    const y = 10 + i * rowH;
    let x = labelW;
    const parts = OUTCOME_KEYS.map((k) => {
      const w = group.shipments === 0 ? 0 : (group[k] / group.shipments) * barW;
      const rect = w > 0
        ? `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 8}" fill="${COLORS[k]}">` +
          `<title>${esc(label)}: ${group[k]} ${k.replace('_', ' ')}</title></rect>`
        : '';
      x += w;
      return rect;
    }).join('');
    return `<text x="${labelW - 8}" y="${y + 13}" text-anchor="end">${esc(label)}</text>${parts}` +
      `<text x="${labelW + barW + 6}" y="${y + 13}">${group.shipments}</text>`;
  }).join('');
  const legend = OUTCOME_KEYS.map((k, i) => `<rect x="${labelW + i * 75}" y="${height - 22}" width="10" height="10" fill="${COLORS[k]}"/>` +
    `<text x="${labelW + i * 75 + 14}" y="${height - 13}">${k.replace('_', ' ')}</text>`).join('');
  return `<figure><figcaption>${esc(title)}</figcaption><svg role="img" aria-label="${esc(title)}" viewBox="0 0 ${width} ${height}" ` +
    `width="100%" font-size="12" font-family="system-ui, sans-serif">${bars}${legend}</svg></figure>`;
}

/** Grouped bars of rates (0–100 %) per group. */
function rateChart(title: string, rows: { label: string; values: { name: string; value: number | null; color: string }[] }[]): string {
  if (rows.length === 0) return '';
  const shown = rows.slice(0, 12);
  const series = shown[0]!.values.length;
  const width = 640, labelW = 170, barW = width - labelW - 70, barH = 10;
  const rowH = series * (barH + 2) + 10;
  const height = shown.length * rowH + 40;
  const bars = shown.map(({ label, values }, i) => {
    const y = 10 + i * rowH;
    const rects = values.map((v, j) => {
      const w = v.value === null ? 0 : v.value * barW;
      const yy = y + j * (barH + 2);
      return `<rect x="${labelW}" y="${yy}" width="${w.toFixed(1)}" height="${barH}" fill="${v.color}">` +
        `<title>${esc(label)}: ${esc(v.name)} ${pct(v.value)}</title></rect>` +
        `<text x="${labelW + w + 4}" y="${yy + 9}" font-size="10">${pct(v.value)}</text>`;
    }).join('');
    return `<text x="${labelW - 8}" y="${y + 12}" text-anchor="end">${esc(label)}</text>${rects}`;
  }).join('');
  // Legend entries placed one after another by the length of their names (about 7 px a character).
  let lx = labelW;
  const legend = shown[0]!.values.map((v) => {
    const entry = `<rect x="${lx}" y="${height - 22}" width="10" height="10" fill="${v.color}"/><text x="${lx + 14}" y="${height - 13}">${esc(v.name)}</text>`;
    lx += 30 + v.name.length * 7;
    return entry;
  }).join('');
  return `<figure><figcaption>${esc(title)}</figcaption><svg role="img" aria-label="${esc(title)}" viewBox="0 0 ${width} ${height}" ` +
    `width="100%" font-size="12" font-family="system-ui, sans-serif">${bars}${legend}</svg></figure>`;
}

const rates = (g: Group) => [
  { name: 'delivered', value: g.delivered_rate, color: COLORS.delivered },
  { name: 'RTO', value: g.rto_rate, color: COLORS.rto },
  { name: 'NDR', value: g.ndr_rate, color: '#ef6c00' },
];

function groupTable(title: string, label: string, rows: { name: string; group: Group }[]): string {
  if (rows.length === 0) return '';
  const body = rows.map(({ name, group: g }) => `<tr><td>${esc(name)}</td><td>${g.shipments}</td>` +
    `<td>${pct(g.delivered_rate)}</td><td>${pct(g.rto_rate)}</td><td>${pct(g.ndr_rate)}</td><td>${pct(g.first_attempt_rate)}</td>` +
    `<td>${days(g.p50_transit_days)}</td><td>${days(g.p90_transit_days)}</td>` +
    `<td>${pct(g.on_time_rate_vs_carrier_edd)}</td><td>${pct(g.on_time_rate_vs_promise)}</td><td>${g.stuck}</td></tr>`).join('');
  return `<h3>${esc(title)}</h3><table><thead><tr><th>${esc(label)}</th><th>Shipments</th><th>Delivered</th><th>RTO</th><th>NDR</th>` +
    `<th>First attempt</th><th>p50 days</th><th>p90 days</th><th>On time (EDD)</th><th>On time (promise)</th><th>Stuck</th></tr></thead>` +
    `<tbody>${body}</tbody></table>`;
}

export function sharePage(doc: AnalysisDoc, expiresAt: string): string {
  const r: Report | null = doc.report;
  const title = doc.name ? `Shipment analysis: ${doc.name}` : 'Shipment analysis';
  let content: string;
  if (!r) {
    content = `<p>This analysis is ${esc(doc.status)} (${doc.done} of ${doc.total} shipments). Reload this page later.</p>`;
  } else {
    const t = r.totals;
    const laneRows = r.by_lane.map((l) => ({ label: `${l.carrier} ${l.origin_prefix}→${l.destination_prefix}`, group: l as Group }));
    const transitRows = r.by_lane.filter((l) => l.p50_transit_days !== null || l.network).slice(0, 12).map((l) => ({
      label: `${l.carrier} ${l.origin_prefix}→${l.destination_prefix}`,
      values: [
        { name: 'yours: delivered on time vs EDD', value: l.on_time_rate_vs_carrier_edd, color: '#1565c0' },
        { name: 'network', value: l.network?.on_time_rate ?? null, color: '#90a4ae' },
      ],
    }));
    const reasons = new Map<string, number>();
    for (const c of r.by_carrier) for (const [k, v] of Object.entries(c.ndr_reasons)) reasons.set(k, Math.max(reasons.get(k) ?? 0, v));
    content = [
      `<section class="totals"><div><b>${t.shipments}</b>shipments</div><div><b>${t.found}</b>found</div>` +
        `<div><b>${t.by_outcome.delivered}</b>delivered</div><div><b>${t.by_outcome.rto}</b>RTO</div>` +
        `<div><b>${t.by_outcome.in_transit}</b>in transit</div><div><b>${t.not_found}</b>not found</div>` +
        `<div><b>${t.errors}</b>carrier errors</div></section>`,
      '<h2>Couriers</h2>',
      outcomeChart('Outcomes by courier', r.by_carrier.map((c) => ({ label: c.carrier, group: c }))),
      rateChart('Delivered, RTO and NDR rates by courier', r.by_carrier.map((c) => ({ label: c.carrier, values: rates(c) }))),
      groupTable('By courier', 'Courier', r.by_carrier.map((c) => ({ name: c.carrier, group: c }))),
      '<h2>Lanes</h2>',
      outcomeChart('Outcomes by lane', laneRows),
      rateChart('On time vs the carrier EDD: yours against the network (30+ deliveries)', transitRows),
      groupTable('By lane', 'Lane', r.by_lane.map((l) => ({
        name: `${l.carrier} ${l.origin_prefix}→${l.destination_prefix}` +
          `${l.network ? ` (network p50 ${days(l.network.p50_transit_days)} d, RTO ${pct(l.network.rto_rate)}, n=${l.network.sample_size})` : ''}`,
        group: l,
      }))),
      '<h2>COD and prepaid</h2>',
      rateChart('Rates by payment mode', r.by_payment_mode.map((m) => ({ label: m.payment_mode, values: rates(m) }))),
      groupTable('By destination state', 'State', r.by_destination_state.map((s) => ({ name: s.state, group: s }))),
      reasons.size
        ? `<h2>Why deliveries failed</h2>${rateChart('Share of failed attempts by reason (per courier)', r.by_carrier
          .filter((c) => Object.keys(c.ndr_reasons).length)
          .map((c) => ({
            label: c.carrier,
            values: [...reasons.keys()].sort().map((k, i) => ({
              name: k.replace(/_/g, ' '), value: c.ndr_reasons[k] ?? 0, color: ['#ef6c00', '#8d6e63', '#c62828', '#5e35b1', '#00838f', '#757575'][i % 6]!,
            })),
          })))}`
        : '',
      '<h2>Recommendations</h2>',
      r.recommendations.length
        ? `<ul>${r.recommendations.map((rec) => `<li><b>${esc(rec.lane)}</b>: consider <b>${esc(rec.suggested_carrier)}</b> ` +
          `instead of ${esc(rec.current_carrier)}. ${esc(rec.reason)}</li>`).join('')}</ul>`
        : `<p>None: no lane where you have ${MIN_OWN_SHIPMENTS}+ shipments has a courier clearly better on the network's figures (30+ deliveries each).</p>`,
      `<h2>Needs attention (${r.attention.length})</h2>`,
      r.attention.length
        ? `<table><thead><tr><th>AWB</th><th>Courier</th><th>Why</th><th>Stage</th><th>Hours since last scan</th><th>NDR reason</th></tr></thead>` +
          `<tbody>${r.attention.slice(0, 200).map((a) => `<tr><td>${esc(a.awb)}</td><td>${esc(a.carrier)}</td>` +
            `<td>${esc(a.reason.replace('_', ' '))}</td><td>${esc(a.current_stage.replace(/_/g, ' '))}</td>` +
            `<td>${a.hours_since_last_scan ?? '–'}</td><td>${esc(a.ndr_reason ?? '–')}</td></tr>`).join('')}</tbody></table>` +
          `${r.attention.length > 200 ? `<p>And ${r.attention.length - 200} more: see the shipments CSV.</p>` : ''}`
        : '<p>Nothing needs action now.</p>',
      `<p class="foot">As of ${esc(r.as_of)}. Rates are of shipments picked up; transit times of delivered shipments, from the first physical scan.</p>`,
    ].join('\n');
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,">
<title>${esc(title)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:980px;padding:24px;color:#212121;background:#fafafa}
h1{font-size:1.6em;margin-bottom:0}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#616161}.totals{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}` +
    `.totals div{background:#fff;border:1px solid #e0e0e0;border-radius:6px;padding:10px 14px;min-width:90px}
.totals b{display:block;font-size:1.5em}figure{margin:16px 0;background:#fff;border:1px solid #e0e0e0;border-radius:6px;padding:8px}` +
    `figcaption{font-weight:600;margin-bottom:4px}
table{border-collapse:collapse;width:100%;background:#fff;font-size:.85em}th,td{border:1px solid #e0e0e0;padding:4px 6px;text-align:right}` +
    `th:first-child,td:first-child{text-align:left}
.foot{color:#757575;font-size:.85em;margin-top:2em}
</style></head>
<body><h1>${esc(title)}</h1><p class="meta">Created ${esc(new Date(doc.created_ms).toISOString())} · ${doc.total} shipments ` +
    `· link valid until ${esc(expiresAt)}</p>
${content}
</body></html>`;
}
