/**
 * The e-mail's unsubscribe page in a real headless Chromium at phone size (360 × 740), served by
 * the embedded default on a free loopback port: the question (GET, which stops nothing), then the
 * button (POST), which stops the address, in English, Hindi, Tamil and Bengali. axe-core finds no
 * serious or critical violation; the page fits the width; nothing is blocked by its policy.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stopDigestOf, unsubscribeTokenOf } from '../../../lib/buyer-notices/index.ts';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../testutil/chromium.ts';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const LANGS = ['en', 'hi', 'ta', 'bn'] as const;
let h: ApiHarness;
let context: BrowserContext;
let page: Page;
let profileDir: string;
let base: string;
const blocked: string[] = [];

beforeAll(async () => {
  requireChromium();
  h = await startApiHarness();
  base = await h.listen();
  profileDir = await mkdtemp(join(tmpdir(), 'unsubscribe-chromium-'));
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
  });
  page = context.pages()[0] ?? await context.newPage();
  page.on('console', (message) => { if (/Content Security Policy|Refused to/i.test(message.text())) blocked.push(message.text()); });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await h?.close();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
});

async function axeProblems(): Promise<string[]> {
  await page.evaluate(await readFile(AXE_SOURCE, 'utf8'));
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null; help: string }[]; passes: unknown[] }> } }).axe;
    const { violations, passes } = await axe.run();
    return { violations, passed: passes.length };
  });
  expect(result.passed).toBeGreaterThan(5);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.help}`);
}

it('asks, then stops the address, in each language: readable at 360 px, no serious or critical axe finding', { timeout: 120_000 }, async () => {
  const notices = h.deps.notices!;
  for (const lang of LANGS) {
    const email = `reader.${lang}@example.com`;
    const prefix = 'trk_test_Unsub0' + LANGS.indexOf(lang);
    const token = unsubscribeTokenOf(notices.unsubscribeSecret, prefix, email);
    const res = await page.goto(`${base}/notices/unsubscribe/${token}?lang=${lang}`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(await page.getAttribute('html', 'lang')).toBe(lang);
    expect(await page.locator('h1').count()).toBe(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    expect(await axeProblems(), `ask ${lang}`).toEqual([]);
    // Opening the link stops nothing (link scanners open links); the button does.
    expect((await notices.store.stopped(prefix)).size).toBe(0);
    await Promise.all([page.waitForLoadState('load'), page.locator('button[type=submit]').click()]);
    await page.waitForSelector('main p');
    expect(await page.getAttribute('html', 'lang')).toBe(lang);
    expect(await axeProblems(), `done ${lang}`).toEqual([]);
    expect([...(await notices.store.stopped(prefix))]).toEqual([stopDigestOf(prefix, email)]);
  }
  expect(blocked).toEqual([]);
});
