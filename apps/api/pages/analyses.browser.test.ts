/**
 * The shared analysis report in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core as pages.browser.test.ts does): the page renders its SVG charts, asks nothing of
 * any other host, and logs no console error. The screenshot is kept in PAGES_SCREENSHOT_DIR when
 * set, else in a temp dir removed afterwards.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { AnalysisSchema, ShareLinkSchema } from '../../../lib/analyzer/index.ts';
import { waitFor } from '../testutil/analyses.suite.ts';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../testutil/chromium.ts';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('the shared analysis report in a browser', () => {
  let h: ApiHarness | undefined;
  let context: BrowserContext | undefined;
  let profileDir: string | undefined;
  let shotDir: string | undefined;
  const keepShots = Boolean(process.env.PAGES_SCREENSHOT_DIR);

  afterAll(async () => {
    await context?.close();
    await h?.close();
    for (const dir of [profileDir, keepShots ? undefined : shotDir]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('renders charts from the server alone: no request to another host, no console error', { timeout: 90_000 }, async () => {
    requireChromium();
    h = await startApiHarness();
    const base = await h.listen();
    const { key } = await h.createKey({ plan: 'business', mode: 'test', burst_per_second: 1000 });
    const headers = { 'x-api-key': key };
    const scenarios = [4, 4, 4, 10, 5, 6, 7, 12, 13, 11, 2, 3, 1, 14, 23, 20];
    const shipments = scenarios.flatMap((s, i) => [
      { awb: `1234567${String(i).padStart(2, '0')}01${String(s).padStart(2, '0')}`, carrier: 'delhivery', payment_mode: i % 3 ? 'prepaid' : 'cod', promised_by: '2026-11-21' },
      { awb: `12345${String(i).padStart(2, '0')}00${String(s).padStart(2, '0')}`, carrier: 'bluedart', payment_mode: i % 2 ? 'prepaid' : 'cod' },
    ]);
    const posted = await h.app.inject({ method: 'POST', url: '/v1/analyses', headers, payload: { name: 'Festive <season> & returns', shipments } });
    expect(posted.statusCode, posted.body).toBe(202);
    const { id } = posted.json() as { id: string };
    await waitFor(async () => AnalysisSchema.parse((await h!.app.inject({ method: 'GET', url: `/v1/analyses/${id}`, headers })).json()), (v) => v.status === 'completed');
    // Over HTTP: the link is built from the host the request named.
    const share = await fetch(`${base}/v1/analyses/${id}/share`, { method: 'POST', headers });
    expect(share.status).toBe(200);
    const link = ShareLinkSchema.parse(await share.json());
    expect(link.url.startsWith(`${base}/shared/analyses/`)).toBe(true);

    profileDir = await mkdtemp(join(tmpdir(), 'analysis-chromium-'));
    shotDir = process.env.PAGES_SCREENSHOT_DIR ?? await mkdtemp(join(tmpdir(), 'analysis-shots-'));
    await mkdir(shotDir, { recursive: true });
    context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1100, height: 900 } });
    const page = context.pages()[0] ?? await context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => { if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));

    // Sent without the API key: the signed link is the only permission.
    const res = await page.goto(link.url, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    // The API's page policy: this origin only, so nothing from elsewhere could load even if linked.
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    expect(res?.headers()['content-security-policy']).not.toMatch(/https?:|\*/);
    expect(await page.title()).toBe('Shipment analysis: Festive <season> & returns');
    expect(await page.locator('svg').count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator('svg rect').count()).toBeGreaterThan(20);
    const text = await page.locator('body').innerText();
    expect(text).toContain('delhivery');
    expect(text).toContain('Needs attention');
    const path = join(shotDir, 'analysis-share.png');
    await page.screenshot({ path, fullPage: true });
    expect((await readFile(path)).subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);

    expect(requests.filter((url) => new URL(url).origin !== base)).toEqual([]);
    expect(problems).toEqual([]);

    // A forged or altered link shows nothing.
    const forged = await fetch(`${link.url.slice(0, -3)}abc`);
    expect(forged.status).toBe(404);
    await forged.arrayBuffer();
  });
});
