import { escapeHtml } from '../../../lib/html/index.ts';
import { page } from './layout.ts';

/** The trial page's form, with an error message above it when a submission was refused. */
export function trialForm(message = ''): string {
  return page('Try the tracking API free for 14 days', `
<p>One HTTP GET tracks a shipment of any of 11 Indian carriers. The trial gives 100 lookups over 14 days; the key comes by e-mail.</p>
${message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : ''}
<form method="post" action="/trial">
  <label for="email">Work e-mail</label><br>
  <input id="email" name="email" type="email" required autocomplete="email" size="32">
  <button type="submit">Get my trial key</button>
</form>
<p>Keys are for server-side code only. See the <a href="/docs">API reference</a>.</p>
<h2>Upgrade a trial key</h2>
<p>Starter, growth and business plans are paid online and work at once. Enter the first 16 characters of your key (its prefix, as our e-mails show it):</p>
<form method="get" action="/billing/renew">
  <label for="key">Key prefix</label><br>
  <input id="key" name="key" required minlength="16" maxlength="16" size="20">
  <input type="hidden" name="plan" value="starter">
  <button type="submit">Choose a plan</button>
</form>`);
}

/** The one answer to a well-formed request: the same whether a key was issued or one had been. */
export function trialSentPage(): string {
  return page('Check your inbox', `
<p>If this e-mail address can have a trial key, we've e-mailed it there: it comes only by e-mail,
and only this once. Each address (and each mailbox, however it is spelled) gets one trial; if this
one had its trial already, the e-mail says so and how to upgrade that key.</p>
<p>Nothing arrived within a few minutes? Check the spam folder, then ask support.</p>`);
}
