export { Billing, type BillingOptions } from './service.ts';
export { AnyEventSchema, PaymentLinkPaidEventSchema, paidLinkOf, type PaidLink } from './event.ts';
export {
  GatewayRefused, GatewayUnavailable, RAZORPAY_API_URL, RazorpayGateway,
  type CreateLinkRequest, type CreatedLink, type GatewayCredentials, type PaymentGateway,
} from './gateway.ts';
export { PAYMENT_LEASE_MS, type LinkAttempt, type PaymentClaim, type PaymentRecord, type PaymentStore } from './payments.ts';
export { EmbeddedPaymentStore, embeddedPaymentsDir } from './payments-embedded.ts';
export { RedisPaymentStore } from './payments-redis.ts';
export { ClickHousePaymentReport, paymentRow } from './payments-clickhouse.ts';
export { paymentProblem, pricePaise, purchasablePlans, type NotAppliedReason } from './plans.ts';
export { callbackSignatureValid, signCallback, signWebhook, webhookSignatureValid, type CallbackParams } from './signature.ts';
export type { PaymentReport, SettleOutcome } from './settle.ts';
export { offeredChoice, paidRenewal, plansOnOffer } from './renewal.ts';
