import type { NoticeMessage } from '../notices/compose.ts';
import type { DisabledReason, EndpointDoc } from './endpoints.ts';

const WHY: Record<DisabledReason, string> = {
  gone: 'it answered 410 Gone, which asks us to stop sending',
  failing: 'every delivery attempt to it failed for 3 days',
};

/** The e-mail to a key's owner when one of its webhook endpoints was disabled. */
export function endpointDisabledMessage(to: string, endpoint: EndpointDoc, reason: DisabledReason): NoticeMessage {
  const text = [
    `Your webhook endpoint ${endpoint.id} (${endpoint.url}) was disabled because ${WHY[reason]}.`,
    '',
    'Events for it are kept for 7 days. Once the endpoint works again, enable it and they are sent in order:',
    `  POST /v1/webhooks/${endpoint.id}/enable`,
    '',
    `See its latest attempts at GET /v1/webhooks/${endpoint.id}/deliveries.`,
  ].join('\n');
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return {
    to,
    subject: `Webhook endpoint ${endpoint.id} disabled`,
    text,
    html: `<pre>${escaped}</pre>`,
    headers: { 'X-Key-Prefix': endpoint.key_prefix, 'X-Webhook-Endpoint': endpoint.id },
  };
}
