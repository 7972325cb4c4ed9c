/**
 * The two pages a person opens, in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core): the API reference at /docs and the self-serve trial page at /trial, served by
 * the embedded default (wired as `npm start` wires it) on a free loopback port.
 *
 * Chromium is installed by scripts/test.sh (`apt-get install -y chromium`); when it is missing this
 * file fails, saying so. Screenshots go to PAGES_SCREENSHOT_DIR when set (kept), else to a temp dir
 * removed afterwards.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../../lib/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../../lib/sandbox/server.ts';
import { UsageRecordSchema } from '../../../lib/schemas/index.ts';
import { buildApp } from '../app.ts';
import { createApiRuntime, type ApiRuntime } from '../context/runtime.ts';
import { keyIn, mailsTo } from '../testutil/mail.ts';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../testutil/chromium.ts';

const API_TITLE = 'Shipment tracking API for Indian couriers';
const TRACK_PATH = '/v1/track/{carrier}/{awb}';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Served {
  base: string;
  page: Page;
}

describe('pages in a browser', () => {
  let dataDir: string | undefined;
  let profileDir: string | undefined;
  let shotDir: string | undefined;
  const keepShots = Boolean(process.env.PAGES_SCREENSHOT_DIR);
  let sandbox: RunningSandbox | undefined;
  let runtime: ApiRuntime | undefined;
  let app: FastifyInstance | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  /** What Chromium reports the pages' Content-Security-Policy blocked: must stay empty. */
  const cspViolations: string[] = [];

  /**
   * Starts the server and the browser once, inside the first test that needs them: a failure here
   * (Chromium missing above all) fails the tests, where one in a hook would only skip them.
   */
  let served: Promise<Served> | undefined;
  const serve = () => (served ??= (async () => {
    requireChromium();
    dataDir = await mkdtemp(join(tmpdir(), 'pages-data-'));
    profileDir = await mkdtemp(join(tmpdir(), 'pages-chromium-'));
    shotDir = process.env.PAGES_SCREENSHOT_DIR ?? await mkdtemp(join(tmpdir(), 'pages-shots-'));
    await mkdir(shotDir, { recursive: true });

    // The embedded default as apps/embedded/main.ts wires it: sandbox carriers, embedded store, real clock.
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    const env = loadEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1' });
    runtime = await createApiRuntime(env, { sandboxUrl: sandbox.url, liveTarget: 'sandbox' });
    app = await buildApp(runtime.deps);
    const base = await app.listen({ port: 0, host: '127.0.0.1' });

    // A fresh, empty profile directory for this run only.
    context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } });
    page = context.pages()[0] ?? await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to (load|execute|apply|connect|frame)/i.test(message.text())) cspViolations.push(message.text());
    });
    return { base, page };
  })());

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await runtime?.close();
    await sandbox?.close();
    for (const dir of [dataDir, profileDir, keepShots ? undefined : shotDir]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A full-page screenshot, checked to be a PNG; returns its path. */
  async function screenshot(name: string): Promise<string> {
    const path = join(shotDir!, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    const png = await readFile(path);
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    return path;
  }

  it('/docs renders the API reference: its title and the track operation', { timeout: 90_000 }, async () => {
    const { base, page } = await serve();
    const res = await page.goto(`${base}/docs`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    // Swagger UI builds the page in the browser from /openapi.json: these exist only once it has.
    const title = page.locator('.swagger-ui .info .title');
    await title.waitFor({ state: 'visible' });
    expect(await title.innerText()).toContain(API_TITLE);
    const track = page.locator(`.opblock-summary-path[data-path="${TRACK_PATH}"]`);
    await track.waitFor({ state: 'visible' });
    expect((await track.innerText()).replace(/\u200b/g, '')).toBe(TRACK_PATH);
    const block = page.locator('.opblock', { has: track });
    expect(await block.locator('.opblock-summary-method').innerText()).toBe('GET');
    expect(await block.locator('.opblock-summary-description').innerText()).toBe('Track a shipment');
    await screenshot('docs');
    // It all works under the page's CSP (apps/api/http/hardening.ts), which blocked nothing.
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    expect(cspViolations).toEqual([]);
  });

  it('/trial e-mails a key to a person who fills in the form; the key works on /v1/usage', { timeout: 90_000 }, async () => {
    const { base, page } = await serve();
    const res = await page.goto(`${base}/trial`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    await page.locator('#email').fill('browser.user@example.com');
    await screenshot('trial-form');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/trial'),
      page.getByRole('button', { name: 'Get my trial key' }).click(),
    ]);
    expect(answer.status()).toBe(202);
    await page.locator('h1', { hasText: 'Check your inbox' }).waitFor({ state: 'visible' });
    expect(await page.locator('body').innerText()).not.toMatch(/trk_(live|test)_/);
    await screenshot('trial-sent');
    // The key went by e-mail (no SMTP_URL: the outbox under DATA_DIR).
    const key = keyIn((await mailsTo(dataDir!, 'browser.user@example.com'))[0] ?? '');
    expect(key).toMatch(/^trk_live_[A-Za-z0-9]{32}$/);
    expect(res?.headers()['content-security-policy']).toContain("form-action 'self'");
    expect(cspViolations).toEqual([]);

    const usage = await fetch(`${base}/v1/usage`, { headers: { 'x-api-key': key! } });
    expect(usage.status).toBe(200);
    const parsed = UsageRecordSchema.safeParse(await usage.json());
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    expect(parsed.data).toMatchObject({
      key_prefix: key!.slice(0, 16),
      plan: 'trial',
      status: 'active',
      period: { lookups_used: 0, lookups_limit: 100, lookups_remaining: 100 },
    });
  });
});
