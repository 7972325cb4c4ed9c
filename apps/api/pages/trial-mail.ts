/**
 * The trial page's two e-mails (issue 29, finding 9). Pure. The page answers the same whether a
 * key was issued or one had been before, so what differs goes by e-mail, to the mailbox itself:
 * a new key (the only e-mail that ever carries a key, and only this once), or a note that this
 * mailbox already had its trial, naming that key by its prefix only.
 */
import type { KeyRecord } from '../../../lib/access/index.ts';
import type { NoticeMessage } from '../../../lib/notices/index.ts';
import { escapeHtml } from '../../../lib/html/index.ts';

function message(to: string, subject: string, lines: string[], headers: Record<string, string>): NoticeMessage {
  return {
    to,
    subject,
    text: [...lines, ''].join('\n'),
    html: [
      '<!doctype html>', '<html><body style="font-family: sans-serif; line-height: 1.5">',
      ...lines.map((l) => `<p>${escapeHtml(l)}</p>`),
      '</body></html>', '',
    ].join('\n'),
    headers,
  };
}

/** The new trial key, to the address it was asked for. */
export function trialKeyMail(to: string, key: string, record: KeyRecord, base: string): NoticeMessage {
  return message(to, 'Your tracking API trial key', [
    `Your trial key (${record.lookups_limit} lookups until ${record.period_end}):`,
    key,
    'Store it now: we keep only its hash, so it cannot be sent again. Keys are for server-side code only.',
    `Try it: curl -H "X-API-Key: <your key>" ${base}/v1/usage`,
    `Need more? Upgrade this key to a paid plan: ${base}/billing/renew?key=${record.prefix}&plan=starter`,
    'If you did not ask for this key, ignore this e-mail.',
  ], { 'X-Key-Prefix': record.prefix });
}

/** Someone asked for a trial for a mailbox that already had one. */
export function trialExistsMail(to: string, existing: KeyRecord | null, base: string): NoticeMessage {
  const which = existing ? `the key starting ${existing.prefix}` : 'a key';
  return message(to, 'Your tracking API trial key', [
    `A trial key was requested for this e-mail address, which already had its trial: ${which}. Each address gets one trial, and a key is sent only once.`,
    ...(existing ? [`To keep going, upgrade that key to a paid plan: ${base}/billing/renew?key=${existing.prefix}&plan=starter`] : []),
    'If you did not ask for this, ignore this e-mail: nothing was changed.',
  ], existing ? { 'X-Key-Prefix': existing.prefix } : {});
}
