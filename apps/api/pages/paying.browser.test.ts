/**
 * Paying as a person does it, in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core, as pages.browser.test.ts): the embedded default wired as `npm start` wires it
 * (sandbox carriers, the sandbox payment gateway in process, the embedded store, the real clock).
 * - the trial key's e-mail's upgrade link → renewal page → the gateway's Pay page → back: the key is on the
 *   paid plan with its counters at zero, as /v1/usage says;
 * - the plan notice e-mail (through a real SMTP server) links to the renewal page of that key and plan.
 * Screenshots go to PAGES_SCREENSHOT_DIR when set (kept), else to a temp dir removed afterwards.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../../lib/config/index.ts';
import { createMailer, noticeSettingsOf, runNoticeJob } from '../../../lib/notices/index.ts';
import { startCaptureServer, type CaptureServer } from '../../../lib/notices/testutil/smtp-capture.ts';
import { startGatewaySandbox, type RunningGateway } from '../../../lib/sandbox/gateway.ts';
import { startSandbox, type RunningSandbox } from '../../../lib/sandbox/server.ts';
import { UsageRecordSchema } from '../../../lib/schemas/index.ts';
import { buildApp } from '../app.ts';
import { createApiRuntime, type ApiRuntime } from '../context/runtime.ts';
import { HOUR_MS } from '../testutil/harness.ts';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../testutil/chromium.ts';

const H = HOUR_MS;

describe('paying in a browser', () => {
  let dataDir: string | undefined;
  let profileDir: string | undefined;
  let shotDir: string | undefined;
  const keepShots = Boolean(process.env.PAGES_SCREENSHOT_DIR);
  let sandbox: RunningSandbox | undefined;
  let gateway: RunningGateway | undefined;
  let smtp: CaptureServer | undefined;
  let runtime: ApiRuntime | undefined;
  let app: FastifyInstance | undefined;
  let context: BrowserContext | undefined;
  const cspViolations: string[] = [];

  /** Started inside the first test (a failure here fails the tests, where a hook would skip them). */
  let served: Promise<{ base: string; page: Page }> | undefined;
  const serve = () => (served ??= (async () => {
    requireChromium();
    dataDir = await mkdtemp(join(tmpdir(), 'paying-data-'));
    profileDir = await mkdtemp(join(tmpdir(), 'paying-chromium-'));
    shotDir = process.env.PAGES_SCREENSHOT_DIR ?? await mkdtemp(join(tmpdir(), 'paying-shots-'));
    await mkdir(shotDir, { recursive: true });
    smtp = await startCaptureServer();
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    gateway = await startGatewaySandbox();
    const env = loadEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1', SMTP_URL: smtp.url });
    runtime = await createApiRuntime(env, { sandboxUrl: sandbox.url, liveTarget: 'sandbox', paymentSandbox: gateway });
    app = await buildApp(runtime.deps);
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    gateway.setWebhookUrl(`${base}/billing/razorpay/webhook`);

    context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } });
    const page = context.pages()[0] ?? await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to (load|execute|apply|connect|frame|send)/i.test(message.text())) cspViolations.push(message.text());
    });
    return { base, page };
  })());

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await runtime?.close();
    await gateway?.close();
    await sandbox?.close();
    await smtp?.close();
    for (const dir of [dataDir, profileDir, keepShots ? undefined : shotDir]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  const shot = (page: Page, name: string) => page.screenshot({ path: join(shotDir!, `${name}.png`), fullPage: true });

  it('a trial key is upgraded: trial page → its e-mail → renewal page → Pay at the gateway → growth at once, counters at zero', { timeout: 90_000 }, async () => {
    const { base, page } = await serve();
    await page.goto(`${base}/trial`, { waitUntil: 'load' });
    await page.locator('#email').fill('paying.user@example.com');
    await page.getByRole('button', { name: 'Get my trial key' }).click();
    await page.locator('h1', { hasText: 'Check your inbox' }).waitFor({ state: 'visible' });
    const mail = smtp!.received.find((m) => m.to.includes('paying.user@example.com'));
    const key = /\btrk_live_[A-Za-z0-9]{32}\b/.exec(mail?.text ?? '')?.[0] ?? '';
    expect(key).not.toBe('');
    const prefix = key.slice(0, 16);
    // One lookup counted, so "counters at zero" after paying means something.
    expect((await fetch(`${base}/v1/track/delhivery/1234567890102`, { headers: { 'x-api-key': key } })).status).toBe(200);

    const upgrade = /(http\S+\/billing\/renew\?key=\S+)/.exec(mail!.text)?.[1];
    expect(upgrade?.startsWith(`${base}/billing/renew?key=${prefix}`)).toBe(true);
    await page.goto(upgrade!, { waitUntil: 'load' });
    expect(await page.locator('#key-prefix').innerText()).toBe(prefix);
    expect(await page.locator('body').innerText()).not.toContain(key);
    await page.getByLabel(/Growth: ₹999 for 30 days/).check();
    await shot(page, 'renew');

    await page.getByRole('button', { name: 'Continue to payment' }).click();
    await page.waitForURL((url) => url.origin === gateway!.url && url.pathname.startsWith('/pay/plink_'));
    expect(await page.locator('body').innerText()).toContain('₹999');
    await shot(page, 'gateway');

    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL((url) => url.origin === base && url.pathname === '/billing/renew/done');
    expect(await page.locator('h1').innerText()).toBe('Thank you: your key is renewed');
    expect(await page.locator('#plan').innerText()).toBe('Growth');
    await shot(page, 'done');
    expect(cspViolations).toEqual([]);

    const usage = UsageRecordSchema.parse(await (await fetch(`${base}/v1/usage`, { headers: { 'x-api-key': key } })).json());
    expect(usage).toMatchObject({ key_prefix: prefix, plan: 'growth', status: 'active', period: { lookups_used: 0, lookups_limit: 4000 } });
    expect(smtp!.received.some((m) => m.to.includes('paying.user@example.com') && m.headers['x-payment-id']?.startsWith('pay_'))).toBe(true);
  });

  it("the notice e-mail's payment link opens the renewal page of that key and plan", { timeout: 90_000 }, async () => {
    const { base, page } = await serve();
    const now = Date.now();
    const { record } = await runtime!.deps.access.createKey({
      plan: 'business', mode: 'live', email: 'notice.reader@example.com',
      period_start: new Date(now - 20 * 24 * H).toISOString(), period_end: new Date(now + 60 * H).toISOString(),
    }, new Date(now - 20 * 24 * H));
    // The notice job as npm start runs it: the renewal page of the address it listens on.
    const env = loadEnv({ DATA_DIR: dataDir!, SMTP_URL: smtp!.url });
    const mailer = createMailer(env);
    try {
      const counts = await runNoticeJob({
        access: runtime!.deps.access, mailer, now: new Date(now), log: { info: () => {}, warn: () => {}, error: () => {} },
        content: { paymentBaseUrl: noticeSettingsOf(env, base).paymentBaseUrl, plans: runtime!.deps.product.config.plans },
      });
      expect(counts.sent).toBeGreaterThanOrEqual(1);
    } finally {
      mailer.close();
    }
    const mail = smtp!.received.find((m) => m.to.includes('notice.reader@example.com'))!;
    const link = /href="([^"]+)"/.exec(mail.html)![1]!.replace(/&amp;/g, '&');
    expect(link).toBe(`${base}/billing/renew?key=${record.prefix}&plan=business`);

    const res = await page.goto(link, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(await page.locator('#key-prefix').innerText()).toBe(record.prefix);
    expect(await page.getByLabel(/Business: ₹3,000 for 30 days/).isChecked()).toBe(true);
    await shot(page, 'notice-link');
  });
});
