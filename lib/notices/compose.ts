/**
 * The notice e-mail. Pure. It names the key only by its prefix (the full key is never stored, and
 * would not belong in an e-mail anyway) and links to the payment page with prefix and plan.
 */
import type { KeyRecord, Notice } from '../access/index.ts';
import type { PlanName, Plans } from '../config/index.ts';
import { IST_OFFSET_MS } from '../time/index.ts';
import { escapeHtml } from '../html/index.ts';

export interface NoticeContent {
  /** Base of the payment page; the link is `<base>/renew?key=<key_prefix>&plan=<plan>`. */
  paymentBaseUrl: string;
  /** Prices and validity of the plans (`config/plans.yaml`). */
  plans: Plans;
}

export interface NoticeMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Extra headers naming the key and the notice, for support staff and mail filters. */
  headers: Record<string, string>;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const inr = new Intl.NumberFormat('en-IN', { maximumFractionDigits: 0 });

function wallClock(ms: number): { date: string; time: string } {
  const d = new Date(ms);
  const date = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  const time = `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  return { date, time };
}

/** "12 Mar 2026, 14:30 UTC (20:00 IST)", with the IST date too when it differs. */
export function formatPeriodEnd(iso: string): string {
  const ms = Date.parse(iso);
  const utc = wallClock(ms);
  const ist = wallClock(ms + IST_OFFSET_MS);
  const istPart = ist.date === utc.date ? `${ist.time} IST` : `${ist.date}, ${ist.time} IST`;
  return `${utc.date}, ${utc.time} UTC (${istPart})`;
}

/** "₹3,000" (Indian digit grouping). */
export function formatInr(amount: number): string {
  return `₹${inr.format(amount)}`;
}

function planTitle(plan: PlanName): string {
  return plan.charAt(0).toUpperCase() + plan.slice(1);
}

/** `<base>/renew?key=<key_prefix>&plan=<plan>`; a base with a path keeps it. */
export function paymentLink(paymentBaseUrl: string, record: Pick<KeyRecord, 'prefix' | 'plan'>): string {
  const base = paymentBaseUrl.endsWith('/') ? paymentBaseUrl : `${paymentBaseUrl}/`;
  const url = new URL('renew', base);
  url.searchParams.set('key', record.prefix);
  url.searchParams.set('plan', record.plan);
  return url.toString();
}


/** The e-mail for one notice of one key. */
export function composeNotice(record: KeyRecord, which: Notice, content: NoticeContent): NoticeMessage {
  const plan = content.plans[record.plan];
  const title = planTitle(record.plan);
  const ends = formatPeriodEnd(record.period_end);
  const link = paymentLink(content.paymentBaseUrl, record);
  const price = plan.price_inr === 0
    ? 'free'
    : `${formatInr(plan.price_inr)} for ${plan.validity_days} days`;
  const lookups = inr.format(record.lookups_limit);

  const subject = which === 'three_day'
    ? `Your ${title} plan for API key ${record.prefix} ends in 3 days`
    : `Last day: your ${title} plan for API key ${record.prefix} ends within 24 hours`;
  const lead = which === 'three_day'
    ? `Your ${title} plan for the tracking API key ${record.prefix} ends in 3 days.`
    : `This is the last day of your ${title} plan for the tracking API key ${record.prefix}.`;
  const facts: [string, string][] = [
    ['API key', `${record.prefix}… (${record.mode})`],
    ['Plan', `${title} (${price}, ${lookups} lookups)`],
    ['Period ends', `${ends} — ${record.period_end}`],
  ];
  const after = 'Plans never renew by themselves. After the period ends, tracking calls with this key are '
    + 'answered 402 payment_required until it is renewed; renewing restores access at once with a new '
    + 'period and the counters at zero. Usage reads keep working.';

  const text = [
    lead,
    '',
    ...facts.map(([k, v]) => `${k}: ${v}`),
    '',
    `Renew (${plan.price_inr === 0 ? 'choose a plan' : formatInr(plan.price_inr)}): ${link}`,
    '',
    after,
    '',
    'You receive this e-mail because this address is registered for the key. The key itself is never sent by e-mail.',
    '',
  ].join('\n');

  const html = [
    '<!doctype html>',
    '<html><body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${escapeHtml(lead)}</p>`,
    '<table>',
    ...facts.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`),
    '</table>',
    `<p><a href="${escapeHtml(link)}">Renew now${plan.price_inr === 0 ? '' : ` (${escapeHtml(formatInr(plan.price_inr))})`}</a></p>`,
    `<p>${escapeHtml(after)}</p>`,
    '<p style="color: #666">You receive this e-mail because this address is registered for the key. The key itself is never sent by e-mail.</p>',
    '</body></html>',
    '',
  ].join('\n');

  return {
    to: record.email,
    subject,
    text,
    html,
    headers: { 'X-Key-Prefix': record.prefix, 'X-Notice': which },
  };
}
