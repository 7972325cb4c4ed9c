/**
 * Razorpay's signatures, as its documentation defines them. Pure.
 * - Webhooks: `X-Razorpay-Signature` is the hex HMAC-SHA256 of the raw request body, keyed with the
 *   webhook secret chosen in the dashboard. Re-serialised JSON would not match: the bytes count.
 * - Payment Link callbacks: `razorpay_signature` is the hex HMAC-SHA256 of
 *   `payment_link_id|payment_link_reference_id|payment_link_status|payment_id`, keyed with the API key secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacHex(secret: string, data: string | Buffer): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

/** Compares in constant time; a signature of another length (or not hex) is simply wrong. */
function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'hex');
  const b = /^[0-9a-f]+$/i.test(given) && given.length % 2 === 0 ? Buffer.from(given, 'hex') : Buffer.alloc(0);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function signWebhook(rawBody: string | Buffer, secret: string): string {
  return hmacHex(secret, rawBody);
}

/** True when `signature` is the webhook signature of `rawBody` under `secret`. */
export function webhookSignatureValid(rawBody: Buffer, signature: string | undefined, secret: string): boolean {
  if (!signature || !secret) return false;
  return sameHex(hmacHex(secret, rawBody), signature.trim());
}

export interface CallbackParams {
  razorpay_payment_id: string;
  razorpay_payment_link_id: string;
  razorpay_payment_link_reference_id: string;
  razorpay_payment_link_status: string;
}

function callbackPayload(p: CallbackParams): string {
  return `${p.razorpay_payment_link_id}|${p.razorpay_payment_link_reference_id}|${p.razorpay_payment_link_status}|${p.razorpay_payment_id}`;
}

export function signCallback(params: CallbackParams, keySecret: string): string {
  return hmacHex(keySecret, callbackPayload(params));
}

export function callbackSignatureValid(params: CallbackParams, signature: string | undefined, keySecret: string): boolean {
  if (!signature || !keySecret) return false;
  return sameHex(signCallback(params, keySecret), signature.trim());
}
