/**
 * The tracking page in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core) at phone size (360 × 740), served by the embedded default on a free loopback
 * port: a moving shipment (its promise in words), a failed attempt (reason and what to do), one
 * running late (a promise already missed, told by the watch), a delivered one, one the carrier has
 * not scanned yet and an order of three parcels on two carriers, each in English, Hindi, Tamil and
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
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { refreshPolicyOf, type RefreshTicks } from '../../../lib/poller/index.ts';
import { addDays, istDayOf } from '../../../lib/time/ist-day.ts';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../testutil/chromium.ts';
import { awbFor, startApiHarness, type ApiHarness } from '../testutil/harness.ts';
import { seedHistory } from '../testutil/history.ts';
import { startRuntimePoller } from '../testutil/poller.ts';

const PHONE = { width: 360, height: 740 };
const STATES = ['moving', 'failed', 'late', 'delivered', 'awaiting', 'order'] as const;
type State = (typeof STATES)[number];
/** The poller's interval in the test (refreshPolicyOf): each round advances the clock by it. */
const POLL_INTERVAL_S = 7200;
const LANGS = ['en', 'hi', 'ta', 'bn'] as const;
const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }

describe('tracking page in a browser at phone size', () => {
  let profileDir: string | undefined;
  let shotDir: string | undefined;
  const keepShots = Boolean(process.env.PAGES_SCREENSHOT_DIR);
  let h: ApiHarness | undefined;
  let poller: RefreshTicks | undefined;
  let context: BrowserContext | undefined;
  const blocked: string[] = [];

  let served: Promise<{ base: string; page: Page; pages: Record<State, string> }> | undefined;
  const serve = () => (served ??= (async () => {
    requireChromium();
    profileDir = await mkdtemp(join(tmpdir(), 'tracking-page-chromium-'));
    shotDir = process.env.PAGES_SCREENSHOT_DIR ?? await mkdtemp(join(tmpdir(), 'tracking-page-shots-'));
    await mkdir(shotDir, { recursive: true });
    // The model learns from a seeded history, so pages show a predicted day and a window, and a
    // missed promise makes the watch tell running late.
    h = await startApiHarness({ deps: (deps) => ({ ...deps, pageViewsPerMinute: 10_000 }) });
    await seedHistory(h, { shipments: 3000, days: 60, seed: 7 });
    poller = startRuntimePoller(h.runtime, h.clock.now, refreshPolicyOf(POLL_INTERVAL_S));
    const base = await h.listen();
    const key = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 })).key;
    const watch = async (carrier: string, awb: string, more: Record<string, string> = {}) => {
      const res = await fetch(`${base}/v1/trackings`, {
        method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ carrier, awb, ...more }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { watch: { page_url: string; order_page_url: string | null } }).watch;
    };
    const today = istDayOf(h.clock.now());
    const moving = await watch('delhivery', awbFor('delhivery', 2));
    const failed = await watch('delhivery', awbFor('delhivery', 5));
    const delivered = await watch('delhivery', awbFor('delhivery', 4));
    // Scenario 02 stays in transit; promised for yesterday, the promise is already missed.
    const late = await watch('delhivery', awbFor('delhivery', 2, 4), { promised_by: addDays(today, -1) });
    // Scenario 00: the carrier has no scan of it yet.
    const awaiting = await watch('delhivery', awbFor('delhivery', 0));
    const order = [
      await watch('delhivery', awbFor('delhivery', 3, 2), { order_id: 'ORD-42' }),
      await watch('delhivery', awbFor('delhivery', 4, 2), { order_id: 'ORD-42' }),
      await watch('bluedart', awbFor('bluedart', 2, 2), { order_id: 'ORD-42' }),
    ];
    const path = (url: string) => new URL(url).pathname;
    const pages: Record<State, string> = {
      moving: path(moving.page_url), failed: path(failed.page_url), late: path(late.page_url), delivered: path(delivered.page_url),
      awaiting: path(awaiting.page_url), order: path(order[0]!.order_page_url!),
    };
    // The poller's rounds poll the watches again; the missed promise is told once, and the page shows it.
    await vi.waitFor(async () => {
      h!.clock.advance(POLL_INTERVAL_S * 1000);
      for (let t = 0; t < 4; t++) await poller!.tick();
      await h!.runtime.bus.flush();
      await h!.runtime.push.dispatcher.drain();
      expect(await (await fetch(`${base}${pages.late}?lang=en`)).text()).toContain('Running late');
    }, { timeout: 60_000, interval: 100 });

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
    await poller?.stop();
    await h?.close();
    for (const dir of [profileDir, keepShots ? undefined : shotDir]) if (dir) await rm(dir, { recursive: true, force: true });
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

  for (const state of STATES) {
    it(`${state}: in each language, readable at 360 px, no serious or critical axe finding`, { timeout: 180_000 }, async () => {
      const { base, page, pages } = await serve();
      for (const lang of LANGS) {
        const res = await page.goto(`${base}${pages[state]}?lang=${lang}`, { waitUntil: 'load' });
        expect(res?.status(), `${state} ${lang}`).toBe(200);
        expect(await page.getAttribute('html', 'lang')).toBe(lang);
        expect(await page.locator('h1').count()).toBe(1);
        // Fits the phone's width: nothing scrolls sideways.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${state} ${lang}: wider than the screen`).toBeLessThanOrEqual(0);
        // What this state is about is on the page, in its own box.
        const shows = { late: '.box.late', moving: '.box .big', delivered: '.box .big', failed: '.box.ndr', awaiting: 'h1', order: 'ol.parcels > li' }[state];
        expect(await page.locator(shows).count(), `${state} ${lang}: ${shows}`).toBeGreaterThan(0);
        expect(await axeProblems(page), `${state} ${lang}`).toEqual([]);
        await page.screenshot({ path: join(shotDir!, `${state}-${lang}.png`), fullPage: true });
      }
      expect(blocked).toEqual([]);
    });
  }
});
