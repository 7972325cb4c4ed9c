export {
  KEY_MODES, KEY_PREFIX_LENGTH, generateKey, hashKey, isKeyPrefix, isWellFormedKey, keyMode, keyPrefix,
  type KeyMode,
} from './key-format.ts';
export {
  CreateKeyInputSchema, KEY_STATUSES, KeyRecordSchema, NOTICES, effectiveStatus, mailboxOf, normalizeEmail, periodNotStarted, toUsageRecord,
  type CreateKeyInput, type EffectiveStatus, type KeyRecord, type KeyStatus, type Notice, type UsageCounters,
} from './record.ts';
export {
  BURST_WINDOW_SECONDS,
  batchGrant, batchOutcome,
  type Allowance, type BatchConsumeResult, type BatchGranted, type ConsumeGranted, type ConsumeLimited, type ConsumeRefusedKey, type ConsumeResult,
  type ConsumeTicket, type KeyStateCode, type LimitCode, type LimitState,
} from './limits.ts';
export { msToNextUtcMidnight, secondsToNextUtcMidnight, utcDay } from './time.ts';
export { AccessError, type AccessErrorReason } from './errors.ts';
export type { AccessStore, Authorization, BatchAuthorization, CreatedKey, PaymentRenewal, TrialRequest } from './store.ts';
export type { KeyTransfer } from './transfer.ts';
export { RedisAccessStore, type RedisAccessStoreOptions } from './redis-store.ts';
export { EmbeddedAccessStore, embeddedAccessDir, type EmbeddedAccessStoreOptions } from './embedded-store.ts';
export { ACCESS_LAYOUT_VERSION, upgradeAccessLayout } from './redis-layout.ts';
export { isGone, standingFromStore, standingOf, type KeyStanding, type StandingOf } from './standing.ts';
