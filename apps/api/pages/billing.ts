/**
 * The renewal pages' HTML. Pure. They name the key by its prefix only, never load anything from
 * elsewhere (no scripts, no fonts), and the one form posts here.
 */
import type { KeyRecord } from '../../../lib/access/index.ts';
import type { PlanName, Plans } from '../../../lib/config/index.ts';
import { formatInr, formatPeriodEnd } from '../../../lib/notices/index.ts';
import { escapeHtml } from '../../../lib/html/index.ts';
import { page } from './layout.ts';

const title = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);

function planLine(name: PlanName, plans: Plans): string {
  const p = plans[name];
  return `${title(name)}: ${formatInr(p.price_inr)} for ${p.validity_days} days, `
    + `${p.lookups.toLocaleString('en-IN')} lookups (up to ${p.daily_quota.toLocaleString('en-IN')} a day)`;
}

export interface RenewPageInput {
  prefix: string;
  plans: Plans;
  /** The plans this key may buy now (lib/billing renewal.ts), cheapest first; never empty. */
  offer: PlanName[];
  selected: PlanName;
  /** This attempt's reference: a retry of the form reuses it, so one attempt makes one link. */
  attempt: string;
  /** Shown above the form (the gateway was down, a plan not on offer). */
  problem?: string;
}

/**
 * The renewal page (contracts.md): the key prefix, the plans it may buy with their prices, and
 * what a renewal does. Nothing about the key's current plan, period or status: anyone holding a
 * prefix can open it.
 */
export function renewPage(input: RenewPageInput): string {
  const { prefix, plans, offer, selected, attempt, problem } = input;
  const choices = offer.map((name) => `
  <label><input type="radio" name="plan" value="${name}"${name === selected ? ' checked' : ''}> ${escapeHtml(planLine(name, plans))}</label><br>`).join('');
  return page('Renew or upgrade an API key', `
<p>API key <code id="key-prefix">${escapeHtml(prefix)}</code>…</p>
${problem ? `<p class="error" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/billing/renew">
  <input type="hidden" name="key" value="${escapeHtml(prefix)}">
  <input type="hidden" name="attempt" value="${escapeHtml(attempt)}">
  <fieldset><legend>Plan (prices in INR)</legend>${choices}
  </fieldset>
  <p>Paying starts a new period from the moment the payment is confirmed, with the counters at zero;
  the chosen plan's limits apply at once. Renewing on the same plan keeps the key's limits; an
  upgrade never lowers any of them. Plans never renew by themselves.</p>
  <button type="submit">Continue to payment</button>
</form>`);
}

/** The one answer for unknown, revoked and suspended prefixes: no form, no link, no reason. */
export function noRenewalPage(prefix: string): string {
  return page(
    'No renewal is possible for this key',
    `<p role="alert">No renewal is possible for the API key <code>${escapeHtml(prefix)}</code>… on this page.</p>
<p>Check the link in your e-mail, or contact support quoting the key prefix.</p>`,
  );
}

/** Online payment is not set up for the key's mode: no form, no link. */
export function noPaymentPage(heading: string, message: string): string {
  return page(heading, `<p role="alert">${escapeHtml(message)}</p><p>No payment can be made for it here.</p>`);
}

/**
 * Where the gateway sends the payer back (its link is signed, so only the payer sees this): the
 * key as the payment left it, or that the payment is still to be confirmed, or was not applied.
 */
export function donePage(key: KeyRecord, paymentId: string, state: 'renewed' | 'pending' | 'not_applied'): string {
  const paid = `Payment <code>${escapeHtml(paymentId)}</code> received.`;
  const prefix = `<code id="key-prefix">${escapeHtml(key.prefix)}</code>…`;
  if (state === 'renewed') {
    const plan = escapeHtml(title(key.plan));
    const until = escapeHtml(formatPeriodEnd(key.period_end));
    return page('Thank you: your key is renewed', `<p>${paid} API key ${prefix} is on the
<strong id="plan">${plan}</strong> plan until ${until}, with ${key.lookups_limit.toLocaleString('en-IN')} lookups; its counters start at zero.</p>
<p>A receipt was sent to the key's e-mail address.</p>`);
  }
  if (state === 'not_applied') {
    return page('Payment received, not applied', `<p>${paid} It did not renew the key ${prefix}; the receipt sent to the key's
e-mail address says why. Reply to it quoting the payment id: support will apply or refund it.</p>`);
  }
  return page('Payment received', `<p>${paid} The key ${prefix} is renewed as soon as the
payment gateway confirms it to us, usually within seconds. Reload this page to see it.</p>`);
}
