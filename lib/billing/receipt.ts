/** The receipt e-mail of a payment. Pure; sent through the notices' mailer. */
import type { KeyRecord } from '../access/index.ts';
import { formatInr, formatPeriodEnd, type NoticeMessage } from '../notices/index.ts';
import type { PaymentRecord } from './payments.ts';
import { escapeHtml } from '../html/index.ts';

const REASONS: Record<string, string> = {
  amount_mismatch: 'the amount paid is not the price of the plan',
  currency_mismatch: 'the payment was not in INR',
  not_captured: 'the payment was not captured',
  unknown_plan: 'the plan could not be recognised',
  key_revoked: 'the key is revoked',
  wrong_gateway: 'the payment came through a gateway this key does not use',
  unknown_key: 'the key is unknown',
  lower_plan: 'the plan paid for is below the key\'s current plan, whose period is still running (a payment never lowers a key)',
};


function title(plan: string | null): string {
  return plan ? plan.charAt(0).toUpperCase() + plan.slice(1) : 'unknown';
}

/** `key` is the key after the payment (renewed when `payment.applied`). */
export function composeReceipt(payment: PaymentRecord, key: KeyRecord): NoticeMessage {
  const amount = formatInr(payment.amount_paise / 100);
  const subject = payment.applied
    ? `Payment received: API key ${key.prefix} renewed on the ${title(payment.plan)} plan`
    : `Payment received for API key ${key.prefix}, not applied yet`;
  const lines = payment.applied
    ? [
      `We received ${amount} (payment ${payment.id}) for the tracking API key ${key.prefix}.`,
      `The key is on the ${title(payment.plan)} plan from now until ${formatPeriodEnd(key.period_end)}, ` +
        `with ${key.lookups_limit.toLocaleString('en-IN')} lookups; its counters start at zero.`,
    ]
    : [
      `We received ${amount} (payment ${payment.id}) for the tracking API key ${key.prefix}, ` +
        `but did not renew the key: ${REASONS[payment.reason ?? ''] ?? 'it could not be applied'}.`,
      'Reply to this e-mail quoting the payment id; support will apply or refund it.',
    ];
  const footer = 'The key itself is never sent by e-mail.';
  return {
    to: key.email,
    subject,
    text: [...lines, '', footer, ''].join('\n'),
    html: [
      '<!doctype html>', '<html><body style="font-family: sans-serif; line-height: 1.5">', ...lines.map((l) => `<p>${escapeHtml(l)}</p>`),
      `<p style="color: #666">${footer}</p>`, '</body></html>', '',
    ].join('\n'),
    headers: { 'X-Key-Prefix': key.prefix, 'X-Payment-Id': payment.id },
  };
}
