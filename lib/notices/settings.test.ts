import { describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from '../config/index.ts';
import { DEFAULT_NOTICE_CRON, DEFAULT_PAYMENT_URL, noticeSettingsOf } from './settings.ts';

/** As the apps read them: through the env schema. */
const noticeSettingsFromEnv = (env: NodeJS.ProcessEnv) => noticeSettingsOf(loadEnv(env));

describe('notice settings from the environment', () => {
  it('defaults to the placeholder payment page, an hourly schedule and the default sender', () => {
    expect(noticeSettingsFromEnv({})).toEqual({
      paymentBaseUrl: DEFAULT_PAYMENT_URL, paymentUrlIsPlaceholder: true,
      from: 'Tracking API <notices@localhost>', cron: DEFAULT_NOTICE_CRON,
    });
    expect(DEFAULT_NOTICE_CRON).toMatch(/^\d+ \* \* \* \*$/);
  });

  it('reads PAYMENT_URL, MAIL_FROM and NOTICE_CRON', () => {
    const s = noticeSettingsFromEnv({ PAYMENT_URL: 'https://pay.example.in/b', MAIL_FROM: 'Billing <b@example.in>', NOTICE_CRON: '*/15 * * * *' });
    expect(s).toEqual({ paymentBaseUrl: 'https://pay.example.in/b', paymentUrlIsPlaceholder: false, from: 'Billing <b@example.in>', cron: '*/15 * * * *' });
  });

  it('names the variable that is wrong', () => {
    expect(() => noticeSettingsFromEnv({ PAYMENT_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => noticeSettingsFromEnv({ PAYMENT_URL: 'ftp://example.in' })).toThrow(/PAYMENT_URL/);
    expect(() => noticeSettingsFromEnv({ NOTICE_CRON: 'every hour' })).toThrow(/NOTICE_CRON/);
  });

  it('reads an empty variable as unset', () => {
    expect(noticeSettingsFromEnv({ PAYMENT_URL: '', MAIL_FROM: '', NOTICE_CRON: '' }).paymentUrlIsPlaceholder).toBe(true);
  });
});
