export {
  NOTICE_CHANNELS, contactProblem, maskEmail, maskPhone, normalizeEmail, normalizePhone, usableChannels, type Contact, type NoticeChannel,
} from './contact.ts';
export { NOTICE_KINDS, noticeOf, type NoticeFacts, type NoticeKind } from './kinds.ts';
export { DAILY_CAP, DEFAULT_NOTICE_SETTINGS, isClock, sendableAt, takeDaySlot, type DaySlots, type NoticeSettings, type QuietHours } from './policy.ts';
export { NOTICE_STATUSES, NoticeStore, noticeIdOf, noticeKeys, stopDigestOf, type NoticeDoc, type NoticeStatus, type NoticeView } from './store.ts';
export { CONTACT_AFTER_END_MS, ContactVault, contactKeyOf, customerViewOf, type ContactDoc, type CustomerView } from './vault.ts';
export { EmailChannel, Msg91SmsChannel, WhatsAppChannel, type ChannelMessage, type NoticeChannelClient, type SendOutcome } from './channels.ts';
export { BuyerNotices, TRIES_PER_CHANNEL, type BuyerNoticesOptions } from './service.ts';
export { NOTICE_CATALOGUES, bodyOf, emailOf, smsTemplate, valuesOf, variablesOf, whatsappTemplate, type NoticeValues } from './templates.ts';
export { readUnsubscribeToken, unsubscribeTokenOf } from './unsubscribe.ts';
export { createNotices, type MessagingSandboxTarget, type NoticesRuntime, type NoticesWiring } from './wire.ts';
export { noticesSpentMessage } from './spent-mail.ts';
export { applyWhatsAppWebhook, isStop, signedByMeta, STOP_WORDS, type WhatsAppWebhookTarget } from './whatsapp-webhook.ts';
