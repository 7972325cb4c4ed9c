/**
 * The providers' end of `npm run bench -- notify`: the sandbox messaging providers
 * (lib/sandbox/messaging.ts: WhatsApp Cloud API, MSG91 Flow, SMTP) in a process of their own, as
 * Meta's and MSG91's servers would be, so their template checks do not run on the sender's event
 * loop. Forked by bench/notify.ts: reports the address and credentials, then every 20 ms what was
 * accepted since as [reference, accepted at (epoch ms)].
 */
import { startMessagingSandbox } from '../../lib/sandbox/messaging.ts';

export type MessagingChildMessage =
  | { type: 'ready'; url: string; smtpUrl: string; whatsapp: { version: string; phoneNumberId: string; accessToken: string }; authKey: string }
  | { type: 'arrivals'; items: [reference: string, acceptedAt: number][] };

let pending: [string, number][] = [];
const sandbox = await startMessagingSandbox({ onReceived: (m) => { pending.push([m.reference ?? m.id, Date.now()]); } });
const flush = setInterval(() => {
  if (pending.length === 0) return;
  process.send!({ type: 'arrivals', items: pending } satisfies MessagingChildMessage);
  pending = [];
}, 20);
process.on('message', (message: { type: string }) => {
  if (message.type !== 'stop') return;
  clearInterval(flush);
  void sandbox.close().then(() => process.exit(0));
});
process.send!({
  type: 'ready', url: sandbox.url, smtpUrl: sandbox.smtpUrl, authKey: sandbox.msg91.authKey,
  whatsapp: { version: sandbox.whatsapp.version, phoneNumberId: sandbox.whatsapp.phoneNumberId, accessToken: sandbox.whatsapp.accessToken },
} satisfies MessagingChildMessage);
