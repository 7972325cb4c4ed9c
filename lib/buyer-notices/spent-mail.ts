/**
 * The key holder's e-mail when the period's customer notices are spent (sent once per period, by
 * the notices mailer the product has). It names the key by its prefix only.
 */
import type { KeyRecord } from '../access/index.ts';
import type { NoticeMessage } from '../notices/index.ts';

export function noticesSpentMessage(key: Pick<KeyRecord, 'prefix' | 'email' | 'plan' | 'period_end'>, allowance: number): NoticeMessage {
  const text = [
    `The customer notices of API key ${key.prefix} (${key.plan} plan: ${allowance} a period) are used up until ${key.period_end.slice(0, 10)}.`,
    '',
    'Until then your customers get no WhatsApp, SMS or e-mail updates from us; the tracking pages and webhooks go on as before.',
    'Upgrade or renew the plan on the renewal page to send them again.',
  ].join('\n');
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return { to: key.email, subject: `Customer notices used up for ${key.prefix}`, text, html: `<pre>${escaped}</pre>`, headers: { 'X-Key-Prefix': key.prefix } };
}
