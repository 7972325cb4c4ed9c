/**
 * Settings of the notice job that are not (yet) part of the shared EnvSchema, read from the raw
 * environment: PAYMENT_URL, MAIL_FROM, NOTICE_CRON. SMTP_URL and DATA_DIR come from `loadEnv()`.
 */
import cron from 'node-cron';
import { z } from 'zod';
import { validateConfig } from '../config/index.ts';
import { DEFAULT_MAIL_FROM } from './mailer.ts';

/** Placeholder payment page; set PAYMENT_URL in any real deployment. */
export const DEFAULT_PAYMENT_URL = 'https://pay.example.com';
/** Hourly, at minute 7 (off the top of the hour, when other cron jobs crowd the mail relay). */
export const DEFAULT_NOTICE_CRON = '7 * * * *';

const NoticeEnvSchema = z.object({
  PAYMENT_URL: z.url({ protocol: /^https?$/ }).optional(),
  MAIL_FROM: z.string().trim().min(3).optional(),
  NOTICE_CRON: z.string().trim().refine((s) => cron.validate(s), 'a cron expression (node-cron syntax)').optional(),
});

export interface NoticeSettings {
  paymentBaseUrl: string;
  /** True when PAYMENT_URL was not set and the placeholder is used: worth a warning at start. */
  paymentUrlIsPlaceholder: boolean;
  from: string;
  cron: string;
}

/** Throws ConfigError naming the variable when one is invalid. */
export function noticeSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): NoticeSettings {
  const parsed = validateConfig(NoticeEnvSchema, {
    PAYMENT_URL: env.PAYMENT_URL || undefined,
    MAIL_FROM: env.MAIL_FROM || undefined,
    NOTICE_CRON: env.NOTICE_CRON || undefined,
  }, 'environment');
  return {
    paymentBaseUrl: parsed.PAYMENT_URL ?? DEFAULT_PAYMENT_URL,
    paymentUrlIsPlaceholder: parsed.PAYMENT_URL === undefined,
    from: parsed.MAIL_FROM ?? DEFAULT_MAIL_FROM,
    cron: parsed.NOTICE_CRON ?? DEFAULT_NOTICE_CRON,
  };
}
