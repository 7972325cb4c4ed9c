/**
 * The renewal pages' HTML. Pure. They name the key by its prefix only, never load anything from
 * elsewhere (no scripts, no fonts), and the one form posts here.
 */
import type { KeyRecord } from '../../lib/access/index.ts';
import type { PlanName, Plans } from '../../lib/config/index.ts';
import { formatInr, formatPeriodEnd } from '../../lib/notices/index.ts';
import { escapeHtml } from '../../lib/html/index.ts';
import { page } from './routes/trial.ts';

const title = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);

function planLine(name: PlanName, plans: Plans): string {
  const p = plans[name];
  return `${title(name)}: ${formatInr(p.price_inr)} for ${p.validity_days} days, ${p.lookups.toLocaleString('en-IN')} lookups (up to ${p.daily_quota.toLocaleString('en-IN')} a day)`;
}

export interface RenewPageInput {
  key: KeyRecord;
  plans: Plans;
  buyable: PlanName[];
  selected: PlanName;
  /** This attempt's reference: a retry of the form reuses it, so one attempt makes one link. */
  attempt: string;
  /** Shown above the form (the gateway was down). */
  problem?: string;
}

export function renewPage(input: RenewPageInput): string {
  const { key, plans, buyable, selected, attempt, problem } = input;
  const current = key.plan === 'trial' ? 'Trial (free)' : planLine(key.plan, plans);
  const heading = key.plan === 'trial' ? 'Upgrade your trial key' : 'Renew your API key';
  const choices = buyable.map((name) => `
  <label><input type="radio" name="plan" value="${name}"${name === selected ? ' checked' : ''}> ${escapeHtml(planLine(name, plans))}</label><br>`).join('');
  return page(heading, `
<p>API key <code id="key-prefix">${escapeHtml(key.prefix)}</code>… (${escapeHtml(key.mode)})</p>
<p>Current plan: <span id="current-plan">${escapeHtml(current)}</span>; period ends ${escapeHtml(formatPeriodEnd(key.period_end))}.</p>
${problem ? `<p class="error" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/billing/renew">
  <input type="hidden" name="key" value="${escapeHtml(key.prefix)}">
  <input type="hidden" name="attempt" value="${escapeHtml(attempt)}">
  <fieldset><legend>Plan (prices in INR)</legend>${choices}
  </fieldset>
  <p>Paying starts a new period from the moment the payment is confirmed, with the counters at zero;
  the chosen plan's limits apply at once. Plans never renew by themselves.</p>
  <button type="submit">Continue to payment</button>
</form>`);
}

/** A key that cannot pay: unknown or revoked. No form, no link. */
export function noPaymentPage(heading: string, message: string): string {
  return page(heading, `<p role="alert">${escapeHtml(message)}</p><p>No payment can be made for it here.</p>`);
}

export function donePage(key: KeyRecord, paymentId: string, renewed: boolean): string {
  const body = renewed
    ? `<p>Payment <code>${escapeHtml(paymentId)}</code> received. API key <code id="key-prefix">${escapeHtml(key.prefix)}</code>… is on the
<strong id="plan">${escapeHtml(title(key.plan))}</strong> plan until ${escapeHtml(formatPeriodEnd(key.period_end))}, with ${key.lookups_limit.toLocaleString('en-IN')} lookups; its counters start at zero.</p>
<p>A receipt was sent to the key's e-mail address.</p>`
    : `<p>Payment <code>${escapeHtml(paymentId)}</code> received. The key <code id="key-prefix">${escapeHtml(key.prefix)}</code>… is renewed as soon as the
payment gateway confirms it to us, usually within seconds. Reload this page to see it.</p>`;
  return page(renewed ? 'Thank you: your key is renewed' : 'Payment received', body);
}
