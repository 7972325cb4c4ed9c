import { describe, expect, it } from 'vitest';
import { callbackSignatureValid, signCallback, signWebhook, webhookSignatureValid } from './signature.ts';

// Expected values computed apart from this code: printf '%s' BODY | openssl dgst -sha256 -hmac SECRET
const BODY = '{"entity":"event","event":"payment_link.paid"}';
const BODY_SIGNATURE = 'ce3da64993f6ce141d9a8106d5903d3894423bfdd08ba5200793f31c57c43e01';
const CALLBACK = {
  razorpay_payment_id: 'pay_Fc8mUeDrEKf08Y', razorpay_payment_link_id: 'plink_Fc8lXILABzQL7M',
  razorpay_payment_link_reference_id: 'TSsd1989', razorpay_payment_link_status: 'partially_paid',
};
const CALLBACK_SIGNATURE = '2263f04afda20af979effea88918fec726a6d671c3b61f8eb67f145c78d37db2';

describe('Razorpay signatures', () => {
  it('webhook: hex HMAC-SHA256 of the raw body with the webhook secret', () => {
    expect(signWebhook(BODY, 'whsec_example')).toBe(BODY_SIGNATURE);
    expect(webhookSignatureValid(Buffer.from(BODY), BODY_SIGNATURE, 'whsec_example')).toBe(true);
    expect(webhookSignatureValid(Buffer.from(BODY), BODY_SIGNATURE.toUpperCase(), 'whsec_example')).toBe(true);
  });

  it('webhook: the same JSON re-serialised, another secret, a cut or missing signature all fail', () => {
    expect(webhookSignatureValid(Buffer.from(JSON.stringify(JSON.parse(BODY), null, 1)), BODY_SIGNATURE, 'whsec_example')).toBe(false);
    expect(webhookSignatureValid(Buffer.from(BODY), BODY_SIGNATURE, 'other')).toBe(false);
    expect(webhookSignatureValid(Buffer.from(BODY), BODY_SIGNATURE.slice(0, 62), 'whsec_example')).toBe(false);
    expect(webhookSignatureValid(Buffer.from(BODY), `${BODY_SIGNATURE.slice(0, 63)}g`, 'whsec_example')).toBe(false);
    expect(webhookSignatureValid(Buffer.from(BODY), undefined, 'whsec_example')).toBe(false);
    expect(webhookSignatureValid(Buffer.from(BODY), BODY_SIGNATURE, '')).toBe(false);
  });

  it('callback: link id | reference id | status | payment id, with the key secret', () => {
    expect(signCallback(CALLBACK, 'key_secret_example')).toBe(CALLBACK_SIGNATURE);
    expect(callbackSignatureValid(CALLBACK, CALLBACK_SIGNATURE, 'key_secret_example')).toBe(true);
    expect(callbackSignatureValid({ ...CALLBACK, razorpay_payment_link_status: 'paid' }, CALLBACK_SIGNATURE, 'key_secret_example')).toBe(false);
  });
});
