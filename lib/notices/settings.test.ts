import { describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from '../config/index.ts';
import { DEFAULT_NOTICE_CRON, noticeSettingsOf } from './settings.ts';

/** As the apps read them: through the env schema. */
const noticeSettingsFromEnv = (env: NodeJS.ProcessEnv, listening?: string) => noticeSettingsOf(loadEnv(env), listening);

describe('notice settings from the environment', () => {
  it("defaults to the service's own renewal page, an hourly schedule and the default sender", () => {
    expect(noticeSettingsFromEnv({})).toEqual({
      paymentBaseUrl: 'http://127.0.0.1:3000/billing',
      from: 'Tracking API <notices@localhost>', cron: DEFAULT_NOTICE_CRON,
    });
    expect(DEFAULT_NOTICE_CRON).toMatch(/^\d+ \* \* \* \*$/);
  });

  it('takes the renewal page from PUBLIC_BASE_URL, else the address listened on, else HOST:PORT', () => {
    expect(noticeSettingsFromEnv({ PUBLIC_BASE_URL: 'https://track.example.in/' }, 'http://127.0.0.1:4000').paymentBaseUrl).toBe('https://track.example.in/billing');
    expect(noticeSettingsFromEnv({}, 'http://127.0.0.1:4000').paymentBaseUrl).toBe('http://127.0.0.1:4000/billing');
    expect(noticeSettingsFromEnv({ HOST: '0.0.0.0', PORT: '8080' }).paymentBaseUrl).toBe('http://localhost:8080/billing');
  });

  it('reads PAYMENT_URL, MAIL_FROM and NOTICE_CRON', () => {
    const s = noticeSettingsFromEnv({ PAYMENT_URL: 'https://pay.example.in/b', MAIL_FROM: 'Billing <b@example.in>', NOTICE_CRON: '*/15 * * * *' });
    expect(s).toEqual({ paymentBaseUrl: 'https://pay.example.in/b', from: 'Billing <b@example.in>', cron: '*/15 * * * *' });
  });

  it('names the variable that is wrong', () => {
    expect(() => noticeSettingsFromEnv({ PAYMENT_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => noticeSettingsFromEnv({ PAYMENT_URL: 'ftp://example.in' })).toThrow(/PAYMENT_URL/);
    expect(() => noticeSettingsFromEnv({ PUBLIC_BASE_URL: 'not a url' })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => noticeSettingsFromEnv({ NOTICE_CRON: 'every hour' })).toThrow(/NOTICE_CRON/);
  });

  it('reads an empty variable as unset', () => {
    expect(noticeSettingsFromEnv({ PAYMENT_URL: '', MAIL_FROM: '', NOTICE_CRON: '' }).paymentBaseUrl).toBe('http://127.0.0.1:3000/billing');
  });
});
