/**
 * Settings of the notice job, from the environment as `loadEnv()` read it: PAYMENT_URL, MAIL_FROM,
 * NOTICE_CRON (validated by the env schema, lib/config).
 */
import type { Env } from '../config/index.ts';
import { DEFAULT_MAIL_FROM } from './mailer.ts';

/** Placeholder payment page; set PAYMENT_URL in any real deployment. */
export const DEFAULT_PAYMENT_URL = 'https://pay.example.com';
/** Hourly, at minute 7 (off the top of the hour, when other cron jobs crowd the mail relay). */
export const DEFAULT_NOTICE_CRON = '7 * * * *';

export interface NoticeSettings {
  paymentBaseUrl: string;
  /** True when PAYMENT_URL was not set and the placeholder is used: worth a warning at start. */
  paymentUrlIsPlaceholder: boolean;
  from: string;
  cron: string;
}

export function noticeSettingsOf(env: Pick<Env, 'PAYMENT_URL' | 'MAIL_FROM' | 'NOTICE_CRON'>): NoticeSettings {
  return {
    paymentBaseUrl: env.PAYMENT_URL ?? DEFAULT_PAYMENT_URL,
    paymentUrlIsPlaceholder: env.PAYMENT_URL === undefined,
    from: env.MAIL_FROM ?? DEFAULT_MAIL_FROM,
    cron: env.NOTICE_CRON ?? DEFAULT_NOTICE_CRON,
  };
}
