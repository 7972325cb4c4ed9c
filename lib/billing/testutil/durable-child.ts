/**
 * A process killed right after payments were acknowledged, for the payment store's durability test
 * (payments-embedded.test.ts): opens the embedded payment store in argv[2] and settles payments
 * `pay_<round>_<i>` four at a time (so they share fsyncs), as the webhook route does (claim, then
 * settle), printing `acked <id>` once `settle` resolved: the moment the route answers the gateway.
 * It never closes the store; the test kills it with SIGKILL.
 */
import { EmbeddedPaymentStore } from '../payments-embedded.ts';
import type { PaymentRecord } from '../payments.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: durable-child.ts DIR');
const store = new EmbeddedPaymentStore(dir);
const NOW = Date.parse('2026-11-28T05:00:00.000Z');

async function pay(id: string): Promise<void> {
  const pending: PaymentRecord = {
    id, key_prefix: 'trk_live_Ab3dE9x', plan: 'growth', amount_paise: 99_900, currency: 'INR', status: 'captured',
    paid_at: '2026-11-28T04:59:00.000Z', link_id: 'plink_durable', reference_id: null, gateway: 'sandbox', applied: false, reason: null,
    state: 'pending', lease_until: NOW + 60_000,
  };
  await store.claim(pending, NOW);
  await store.settle({ ...pending, applied: true, state: 'settled', lease_until: 0 });
  // Synchronous on a pipe (Linux): once the test reads it, `settle` had resolved.
  process.stdout.write(`acked ${id}\n`);
}

for (let round = 0; ; round++) await Promise.all([0, 1, 2, 3].map((i) => pay(`pay_${round}_${i}`)));
