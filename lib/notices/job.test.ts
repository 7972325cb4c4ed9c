/**
 * The notice job end to end: a real EmbeddedAccessStore in a temp dir, nodemailer over SMTP to a
 * real SMTP server (smtp-server on 127.0.0.1, port 0), and the file outbox.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedAccessStore, embeddedAccessDir, type AccessStore, type CreateKeyInput } from '../access/index.ts';
import { DEFAULT_CONFIG_DIR, loadPlans } from '../config/index.ts';
import { createMailer, type Mailer } from './mailer.ts';
import { runNoticeJob } from './job.ts';
import { scheduleNotices } from './schedule.ts';
import { readMime, startCaptureServer, type CaptureServer } from './testutil/smtp-capture.ts';

const plans = loadPlans(DEFAULT_CONFIG_DIR);
const content = { paymentBaseUrl: 'https://pay.example.in/billing', plans };
const H = 3_600_000;
const D = 24 * H;
const NOW = Date.parse('2026-12-01T09:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function recordingLog() {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    log: {
      info: (message: string) => { lines.push({ level: 'info', message }); },
      warn: (message: string) => { lines.push({ level: 'warn', message }); },
      error: (message: string) => { lines.push({ level: 'error', message }); },
    },
  };
}

let dataDir: string;
let store: AccessStore;
let smtp: CaptureServer | null;
const mailers: Mailer[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'notices-'));
  store = new EmbeddedAccessStore({ plans, dir: embeddedAccessDir(dataDir) });
  smtp = null;
});
afterEach(async () => {
  for (const m of mailers.splice(0)) m.close();
  await store.close();
  await smtp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function mailerFor(env: { SMTP_URL?: string }): Mailer {
  const mailer = createMailer({ DATA_DIR: dataDir, ...env }, { from: 'Tracking API <billing@example.in>' });
  mailers.push(mailer);
  return mailer;
}

/** The real store, except that `getByPrefix` answers only once `parties` callers have read that key. */
function readTogether(inner: AccessStore, parties: number): AccessStore {
  const waiting = new Map<string, (() => void)[]>();
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'getByPrefix') {
        return async (prefix: string) => {
          const record = await target.getByPrefix(prefix);
          await new Promise<void>((resolve) => {
            const queue = [...(waiting.get(prefix) ?? []), resolve];
            waiting.set(prefix, queue);
            if (queue.length === parties) queue.forEach((release) => release());
          });
          return record;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A key whose period ends `endsIn` after NOW (and started 30 days before that end). */
async function keyEnding(endsIn: number, input: Partial<CreateKeyInput> = {}) {
  const end = NOW + endsIn;
  return store.createKey({
    plan: 'growth', mode: 'live', email: 'owner@example.com',
    period_start: iso(end - 30 * D), period_end: iso(end), ...input,
  }, new Date(NOW - 30 * D));
}

describe('runNoticeJob over SMTP', () => {
  it('sends the due notices once each through a real SMTP server, never for revoked, suspended or expired keys', async () => {
    smtp = await startCaptureServer();
    const mailer = mailerFor({ SMTP_URL: smtp.url });
    const threeDay = await keyEnding(60 * H, { email: 'three@example.com' });
    const lastDay = await keyEnding(10 * H, { email: 'last@example.com', plan: 'starter', mode: 'test' });
    const revoked = await keyEnding(50 * H, { email: 'revoked@example.com' });
    await store.setStatus(revoked.record.prefix, 'revoked');
    const suspended = await keyEnding(10 * H, { email: 'suspended@example.com' });
    await store.setStatus(suspended.record.prefix, 'suspended');
    await keyEnding(-H, { email: 'expired@example.com' });
    await keyEnding(10 * D, { email: 'later@example.com' });

    const { log, lines } = recordingLog();
    const counts = await runNoticeJob({ access: store, mailer, content, now: new Date(NOW), log });
    expect(counts).toEqual({ due: 2, sent: 2, skipped: 0, failed: 0, deferred: 0 });
    expect(smtp.received.map((m) => m.to)).toEqual([['three@example.com'], ['last@example.com']]);

    const [first, second] = smtp.received;
    expect(first!.from).toBe('billing@example.in');
    expect(first!.headers['subject']).toBe(`Your Growth plan for API key ${threeDay.record.prefix} ends in 3 days`);
    expect(first!.headers['x-notice']).toBe('three_day');
    expect(first!.text).toContain(`https://pay.example.in/billing/renew?key=${threeDay.record.prefix}&plan=growth`);
    expect(first!.text).toContain('₹999 for 30 days');
    expect(first!.text).toContain(threeDay.record.period_end);
    expect(first!.html).toContain(`renew?key=${threeDay.record.prefix}&amp;plan=growth`);
    expect(second!.headers['subject']).toContain('Last day: your Starter plan');
    expect(second!.text).toContain(`renew?key=${lastDay.record.prefix}&plan=starter`);
    expect(second!.text).toContain('₹399');
    // The key itself is never mailed, nor logged; the e-mail address is not logged either.
    for (const m of smtp.received) {
      expect(m.raw).not.toContain(threeDay.key);
      expect(m.raw).not.toContain(lastDay.key);
    }
    expect(lines.map((l) => l.message).join('\n')).not.toMatch(/@example\.com|trk_\w+_\w{32}/);

    expect((await store.getByPrefix(threeDay.record.prefix))!.notices_sent).toEqual({ three_day: iso(NOW) });
    expect((await store.getByPrefix(lastDay.record.prefix))!.notices_sent).toEqual({ last_day: iso(NOW) });

    // Once each: the next hourly rounds send nothing new.
    const again = await runNoticeJob({ access: store, mailer, content, now: new Date(NOW + H), log });
    expect(again).toEqual({ due: 0, sent: 0, skipped: 0, failed: 0, deferred: 0 });
    expect(smtp.received).toHaveLength(2);

    // The three-day key reaches its last day: one more notice. The other has expired: none.
    const later = await runNoticeJob({ access: store, mailer, content, now: new Date(NOW + 40 * H), log });
    expect(later.sent).toBe(1);
    expect(smtp.received[2]!.to).toEqual(['three@example.com']);
    expect(smtp.received[2]!.headers['x-notice']).toBe('last_day');
    expect((await runNoticeJob({ access: store, mailer, content, now: new Date(NOW + 59 * H), log })).sent).toBe(0);
    expect(smtp.received).toHaveLength(3);
  });

  it('starts over after a renewal: the next period gets both notices again', async () => {
    smtp = await startCaptureServer();
    const mailer = mailerFor({ SMTP_URL: smtp.url });
    const { log } = recordingLog();
    const { record } = await keyEnding(10 * H);
    expect((await runNoticeJob({ access: store, mailer, content, now: new Date(NOW), log })).sent).toBe(1);

    const renewedAt = NOW + 2 * H;
    const renewed = await store.renew(record.prefix, 'business', new Date(renewedAt));
    expect(renewed.notices_sent).toEqual({});
    const end = Date.parse(renewed.period_end);
    expect(end).toBe(renewedAt + 30 * D);

    expect((await runNoticeJob({ access: store, mailer, content, now: new Date(renewedAt + H), log })).due).toBe(0);
    expect((await runNoticeJob({ access: store, mailer, content, now: new Date(end - 70 * H), log })).sent).toBe(1);
    expect((await runNoticeJob({ access: store, mailer, content, now: new Date(end - 20 * H), log })).sent).toBe(1);
    expect(smtp.received.map((m) => m.headers['x-notice'])).toEqual(['last_day', 'three_day', 'last_day']);
    expect(smtp.received[1]!.text).toContain(`renew?key=${record.prefix}&plan=business`);
    expect(smtp.received[1]!.text).toContain('₹3,000');
  });

  it('sends each notice once when several jobs claim it at the same time', async () => {
    smtp = await startCaptureServer();
    const { log } = recordingLog();
    for (let i = 0; i < 5; i++) await keyEnding((30 + i) * H, { email: `k${i}@example.com` });
    // Every job has read the unclaimed record before any claims it: only markNoticeSent decides.
    const shared = readTogether(store, 3);
    const runs = await Promise.all([0, 1, 2].map(() =>
      runNoticeJob({ access: shared, mailer: mailerFor({ SMTP_URL: smtp!.url }), content, now: new Date(NOW), log })));
    expect(runs.reduce((n, r) => n + r.sent, 0)).toBe(5);
    expect(runs.reduce((n, r) => n + r.skipped, 0)).toBe(10);
    expect(smtp.received.map((m) => m.to[0]).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4'].map((k) => `${k}@example.com`));
  });

  it('claims nothing while the SMTP server is unreachable, and sends on the next round', async () => {
    const gone = await startCaptureServer();
    await gone.close();
    const { record } = await keyEnding(60 * H);
    const { log, lines } = recordingLog();
    const down = await runNoticeJob({ access: store, mailer: mailerFor({ SMTP_URL: gone.url }), content, now: new Date(NOW), log });
    expect(down).toEqual({ due: 1, sent: 0, skipped: 0, failed: 0, deferred: 1 });
    expect(lines.some((l) => l.level === 'warn' && l.message.includes('unavailable'))).toBe(true);
    expect((await store.getByPrefix(record.prefix))!.notices_sent).toEqual({});

    smtp = await startCaptureServer();
    const up = await runNoticeJob({ access: store, mailer: mailerFor({ SMTP_URL: smtp.url }), content, now: new Date(NOW + H), log });
    expect(up.sent).toBe(1);
    expect(smtp.received).toHaveLength(1);
  });

  it('logs a refused delivery, keeps the claim (at most once) and goes on with the other keys', async () => {
    smtp = await startCaptureServer(['bounce@example.com']);
    const mailer = mailerFor({ SMTP_URL: smtp.url });
    const bounced = await keyEnding(60 * H, { email: 'bounce@example.com' });
    await keyEnding(61 * H, { email: 'fine@example.com' });
    const { log, lines } = recordingLog();
    const counts = await runNoticeJob({ access: store, mailer, content, now: new Date(NOW), log, retryDelaysMs: [10] });
    expect(counts).toEqual({ due: 2, sent: 1, skipped: 0, failed: 1, deferred: 0 });
    expect(smtp.received.map((m) => m.to)).toEqual([['fine@example.com']]);
    const error = lines.find((l) => l.level === 'error');
    expect(error?.message).toContain(`three_day notice for ${bounced.record.prefix}`);
    expect(error?.message).toContain('not retried');
    expect((await store.getByPrefix(bounced.record.prefix))!.notices_sent.three_day).toBe(iso(NOW));
    expect((await runNoticeJob({ access: store, mailer, content, now: new Date(NOW + H), log })).due).toBe(0);
  });
});

describe('outbox fallback', () => {
  it('writes each notice as an .eml file under DATA_DIR/outbox when SMTP_URL is not set', async () => {
    const mailer = mailerFor({});
    expect(mailer.kind).toBe('outbox');
    const { record } = await keyEnding(60 * H, { email: 'outbox@example.com', plan: 'business' });
    await keyEnding(5 * H, { email: 'outbox2@example.com' });
    const { log } = recordingLog();
    const counts = await runNoticeJob({ access: store, mailer, content, now: new Date(NOW), log });
    expect(counts.sent).toBe(2);

    const dir = join(dataDir, 'outbox');
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2);
    expect(files.every((f) => f.endsWith('.eml'))).toBe(true);
    const mails = files.map((f) => readMime(readFileSync(join(dir, f), 'utf8')));
    const mail = mails.find((m) => m.headers['to'] === 'outbox@example.com')!;
    expect(mail.headers['from']).toBe('Tracking API <billing@example.in>');
    expect(mail.headers['subject']).toBe(`Your Business plan for API key ${record.prefix} ends in 3 days`);
    expect(mail.headers['message-id']).toMatch(/^<.+>$/);
    expect(mail.text).toContain(`https://pay.example.in/billing/renew?key=${record.prefix}&plan=business`);
    expect(mails.find((m) => m.headers['to'] === 'outbox2@example.com')?.headers['x-notice']).toBe('last_day');
  });
});

describe('scheduleNotices', () => {
  it('runs rounds on its cron schedule until stopped', async () => {
    smtp = await startCaptureServer();
    await keyEnding(60 * H, { email: 'cron@example.com' });
    const { log } = recordingLog();
    const rounds: number[] = [];
    let clock = NOW;
    const stop = scheduleNotices({
      access: store, mailer: mailerFor({ SMTP_URL: smtp.url }), content, log,
      clock: () => clock, cron: '* * * * * *', runAtStart: false, onRound: (c) => rounds.push(c.sent),
    });
    const deadline = Date.now() + 20_000;
    while (smtp.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(smtp.received.map((m) => m.to)).toEqual([['cron@example.com']]);
    clock = NOW + 40 * H; // the next ticks find the last-day notice due
    while (smtp.received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await stop();
    expect(smtp.received.map((m) => m.headers['x-notice'])).toEqual(['three_day', 'last_day']);
    const after = rounds.length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(rounds.length).toBe(after);
  });

  it('runs a round at start by default', async () => {
    const mailer = mailerFor({});
    await keyEnding(60 * H);
    const { log } = recordingLog();
    let resolveRound!: (sent: number) => void;
    const round = new Promise<number>((r) => { resolveRound = r; });
    const stop = scheduleNotices({ access: store, mailer, content, log, clock: () => NOW, onRound: (c) => resolveRound(c.sent) });
    expect(await round).toBe(1);
    await stop();
    expect(readdirSync(join(dataDir, 'outbox'))).toHaveLength(1);
  });
});
