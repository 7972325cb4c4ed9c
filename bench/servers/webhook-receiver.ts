/**
 * The receiving end of `npm run bench -- webhooks`: the verifying test receiver
 * (lib/push/testutil/receiver.ts, which checks every request with the `standardwebhooks`
 * package) in a process of its own, as a customer's receiver would be, so its verification does
 * not run on the dispatcher's event loop. One listener per endpoint (BENCH_RECEIVER_ENDPOINTS),
 * each verifying with its endpoint's secret only. Forked by bench/webhooks.ts: reports the URLs,
 * takes the secrets, and every 20 ms reports what arrived since as [webhook-id, receivedAt ms,
 * verified and answered 2xx].
 */
import { startReceiver, type ReceivedDelivery } from '../../lib/push/testutil/receiver.ts';

export type ReceiverChildMessage =
  | { type: 'ready'; urls: string[] }
  | { type: 'arrivals'; items: [id: string, receivedAt: number, ok: boolean][] };
/** `secrets[i]` verifies what arrives at `urls[i]`. */
export type ReceiverParentMessage = { type: 'secrets'; secrets: string[] } | { type: 'stop' };

const receivers = await Promise.all(Array.from({ length: Number(process.env.BENCH_RECEIVER_ENDPOINTS ?? 1) }, () => startReceiver()));
const reported = receivers.map(() => 0);

/** How long an answer may stay unwritten (the sender hung up) before the arrival is reported as failed. */
const UNSETTLED_MS = 20_000;

/** An arrival is reported once its answer is settled: written (2xx), or refused (unverified). */
const settled = (d: ReceivedDelivery) =>
  d.answered === true || d.answeredStatus < 200 || d.answeredStatus >= 300 || Date.now() - d.receivedAt > UNSETTLED_MS;

const flush = setInterval(() => {
  const items: [string, number, boolean][] = [];
  receivers.forEach((receiver, i) => {
    while (reported[i]! < receiver.deliveries.length && settled(receiver.deliveries[reported[i]!]!)) {
      const d = receiver.deliveries[reported[i]!]!;
      items.push([d.id, d.receivedAt, d.verifiedWith.length > 0 && d.answeredStatus >= 200 && d.answeredStatus < 300 && d.answered === true]);
      // The bodies are not needed once reported: tens of thousands of them would only fill the heap.
      d.rawBody = '';
      d.body = null;
      d.headers = {};
      reported[i]!++;
    }
  });
  if (items.length) process.send?.({ type: 'arrivals', items } satisfies ReceiverChildMessage);
}, 20);

const stop = async () => {
  clearInterval(flush);
  await Promise.all(receivers.map((r) => r.close()));
  process.exit(0);
};
process.on('message', (message: ReceiverParentMessage) => {
  if (message.type === 'secrets') receivers.forEach((r, i) => r.setSecrets(message.secrets[i] ? [message.secrets[i]] : []));
  else void stop();
});
process.on('disconnect', () => void stop());
process.send?.({ type: 'ready', urls: receivers.map((r) => r.url) } satisfies ReceiverChildMessage);
