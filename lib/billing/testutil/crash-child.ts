/**
 * A process killed at the one point where a crash used to renew a key twice (issue 29): after the
 * key was renewed for a payment, before the payment's record was settled. argv: the backend (JSON
 * of BillingBackend), the key prefix, the payment id, the delivery time (epoch ms). It delivers
 * the payment with a payment store whose `settle` kills the process (SIGKILL) instead of writing.
 */
import type { PaymentStore } from '../payments.ts';
import { deliverPayment, growthPayment, openBillingStores, type BillingBackend } from './stores.ts';

const [backendJson, prefix, paymentId, at] = process.argv.slice(2);
if (!backendJson || !prefix || !paymentId || !at) throw new Error('usage: crash-child.ts BACKEND_JSON PREFIX PAYMENT_ID NOW_MS');
const stores = openBillingStores(JSON.parse(backendJson) as BillingBackend);
const dying: PaymentStore = {
  claim: (pending, nowMs) => stores.payments.claim(pending, nowMs),
  settle: () => {
    process.kill(process.pid, 'SIGKILL');
    return new Promise<void>(() => undefined);
  },
  listByKey: (p) => stores.payments.listByKey(p),
  saveAttempt: (a) => stores.payments.saveAttempt(a),
  getAttempt: (r) => stores.payments.getAttempt(r),
  close: () => stores.payments.close(),
};
await deliverPayment({ access: stores.access, payments: dying }, growthPayment(prefix, paymentId, Number(at)), Number(at));
throw new Error('the delivery settled: the child was not killed where it should have been');
