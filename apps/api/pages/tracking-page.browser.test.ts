/**
 * The tracking page in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core) at phone size (360 × 740), served by the embedded default on a free loopback
 * port: a moving shipment (its promise in words), a failed attempt (reason and what to do), a
 * delivered one and an order of three parcels on two carriers, each in English, Hindi, Tamil and
 * Bengali. axe-core (the npm package, run in the page) finds no serious or critical violation; the
 * page fits the width (no sideways scroll) and Chromium reports nothing its policy blocked.
 *
 * axe is evaluated through the DevTools protocol: the page's own policy allows no script at all,
 * which is the point of it. Screenshots go to PAGES_SCREENSHOT_DIR when set (kept), else a temp dir.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../../lib/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../../lib/sandbox/server.ts';
import { buildApp } from '../app.ts';
import { createApiRuntime, type ApiRuntime } from '../context/runtime.ts';
import { ADMIN_TOKEN, awbFor } from '../testutil/harness.ts';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../testutil/chromium.ts';

const PHONE = { width: 360, height: 740 };
const LANGS = ['en', 'hi', 'ta', 'bn'] as const;
const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }

describe('tracking page in a browser at phone size', () => {
  let dataDir: string | undefined;
  let profileDir: string | undefined;
  let shotDir: string | undefined;
  const keepShots = Boolean(process.env.PAGES_SCREENSHOT_DIR);
  let sandbox: RunningSandbox | undefined;
  let runtime: ApiRuntime | undefined;
  let app: FastifyInstance | undefined;
  let context: BrowserContext | undefined;
  const blocked: string[] = [];

  let served: Promise<{ base: string; page: Page; pages: Record<string, string> }> | undefined;
  const serve = () => (served ??= (async () => {
    requireChromium();
    dataDir = await mkdtemp(join(tmpdir(), 'tracking-page-data-'));
    profileDir = await mkdtemp(join(tmpdir(), 'tracking-page-chromium-'));
    shotDir = process.env.PAGES_SCREENSHOT_DIR ?? await mkdtemp(join(tmpdir(), 'tracking-page-shots-'));
    await mkdir(shotDir, { recursive: true });
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    const env = loadEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN });
    runtime = await createApiRuntime(env, { sandboxUrl: sandbox.url, liveTarget: 'sandbox' });
    app = await buildApp(runtime.deps);
    const base = await app.listen({ port: 0, host: '127.0.0.1' });

    const made = await fetch(`${base}/admin/keys`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'starter', mode: 'test', email: 'shop@example.com', burst_per_second: 1000 }),
    });
    const key = ((await made.json()) as { key: string }).key;
    const watch = async (carrier: string, awb: string, orderId?: string) => {
      const res = await fetch(`${base}/v1/trackings`, {
        method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ carrier, awb, ...(orderId ? { order_id: orderId } : {}) }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { watch: { page_url: string; order_page_url: string | null } }).watch;
    };
    const moving = await watch('delhivery', awbFor('delhivery', 2));
    const failed = await watch('delhivery', awbFor('delhivery', 5));
    const delivered = await watch('delhivery', awbFor('delhivery', 4));
    const order = [
      await watch('delhivery', awbFor('delhivery', 3, 2), 'ORD-42'),
      await watch('delhivery', awbFor('delhivery', 4, 2), 'ORD-42'),
      await watch('bluedart', awbFor('bluedart', 2, 2), 'ORD-42'),
    ];
    const path = (url: string) => new URL(url).pathname;
    const pages = {
      moving: path(moving.page_url), failed: path(failed.page_url), delivered: path(delivered.page_url), order: path(order[0]!.order_page_url!),
    };

    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
    });
    const page = context.pages()[0] ?? await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to (load|execute|apply|connect|frame)/i.test(message.text())) blocked.push(message.text());
    });
    return { base, page, pages };
  })());

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await runtime?.close();
    await sandbox?.close();
    for (const dir of [dataDir, profileDir, keepShots ? undefined : shotDir]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** axe-core's serious and critical violations of the page as loaded. */
  async function axeProblems(page: Page): Promise<string[]> {
    await page.evaluate(await readFile(AXE_SOURCE, 'utf8'));
    const result = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[]; passes: unknown[] }> } }).axe;
      const { violations, passes } = await axe.run();
      return { violations, passed: passes.length };
    });
    // axe checked something (a page it could not read would pass nothing).
    expect(result.passed).toBeGreaterThan(10);
    const violations = result.violations as AxeViolation[];
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  }

  for (const state of ['moving', 'failed', 'delivered', 'order'] as const) {
    it(`${state}: in each language, readable at 360 px, no serious or critical axe finding`, { timeout: 120_000 }, async () => {
      const { base, page, pages } = await serve();
      for (const lang of LANGS) {
        const res = await page.goto(`${base}${pages[state]}?lang=${lang}`, { waitUntil: 'load' });
        expect(res?.status(), `${state} ${lang}`).toBe(200);
        expect(await page.getAttribute('html', 'lang')).toBe(lang);
        expect(await page.locator('h1').count()).toBe(1);
        // Fits the phone's width: nothing scrolls sideways.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${state} ${lang}: wider than the screen`).toBeLessThanOrEqual(0);
        expect(await axeProblems(page), `${state} ${lang}`).toEqual([]);
        await page.screenshot({ path: join(shotDir!, `${state}-${lang}.png`), fullPage: true });
      }
      expect(blocked).toEqual([]);
    });
  }
});
