/**
 * Settings of the notice job, from the environment as `loadEnv()` read it: PAYMENT_URL (or the
 * service's own renewal page), MAIL_FROM, NOTICE_CRON (validated by the env schema, lib/config).
 */
import type { Env } from '../config/index.ts';
import { DEFAULT_MAIL_FROM } from './mailer.ts';

/** Hourly, at minute 7 (off the top of the hour, when other cron jobs crowd the mail relay). */
export const DEFAULT_NOTICE_CRON = '7 * * * *';

export interface NoticeSettings {
  /** Base of the payment link: PAYMENT_URL, else `<public base URL>/billing` (the renewal page). */
  paymentBaseUrl: string;
  from: string;
  cron: string;
}

/**
 * The address customers reach this service at: PUBLIC_BASE_URL, else the address it listens on
 * (`listening`, when known), else `http://HOST:PORT` (a wildcard host read as localhost).
 */
export function publicBaseUrlOf(env: Pick<Env, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>, listening?: string): string {
  const base = env.PUBLIC_BASE_URL ?? listening ?? `http://${env.HOST === '0.0.0.0' || env.HOST === '::' ? 'localhost' : env.HOST}:${env.PORT}`;
  return base.replace(/\/+$/, '');
}

export function noticeSettingsOf(
  env: Pick<Env, 'PAYMENT_URL' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT' | 'MAIL_FROM' | 'NOTICE_CRON'>, listening?: string,
): NoticeSettings {
  return {
    paymentBaseUrl: env.PAYMENT_URL ?? `${publicBaseUrlOf(env, listening)}/billing`,
    from: env.MAIL_FROM ?? DEFAULT_MAIL_FROM,
    cron: env.NOTICE_CRON ?? DEFAULT_NOTICE_CRON,
  };
}
