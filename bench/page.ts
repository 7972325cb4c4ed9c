/**
 * npm run bench -- page: the tracking page (`/t/<token>`) served from the cache by the embedded
 * default (bench/servers/api.ts, wired as npm start): views per second and p99 under
 * LOAD_CONNECTIONS connections for PAGE_SECONDS, and the bytes of one page, in each language.
 * Targets (issue 42): ≥ 3,000 views/s, p99 ≤ 20 ms, ≤ 30 KB. The key has a branding with the
 * largest logo (served apart from the page). The per-address limit is lifted for the run (every
 * view comes from 127.0.0.1).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pngOf } from '../lib/branding/testutil/images.ts';
import { createBenchKey, load, progressLog, serverEnv, startServer, tracked, type Server } from './harness.ts';
import type { BenchResult } from './report.ts';
import { percentile, round } from './stats.ts';

const DURATION_S = Number(process.env.BENCH_PAGE_SECONDS ?? 10);
const LANGS = ['en', 'hi', 'ta', 'bn'] as const;
const log = progressLog('page');

/** A watch of a moving sandbox shipment (scenario 02: in transit) and its page's URL. */
async function watchedPage(server: Server, key: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/trackings`, {
    method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ carrier: 'delhivery', awb: '1234567890102', order_id: 'BENCH-1' }),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST /v1/trackings → ${res.status} ${text}`);
  return (JSON.parse(text) as { watch: { page_url: string } }).watch.page_url;
}

/**
 * The shop's branding with a name, a colour and the largest logo allowed (50 KB): the page shows
 * the logo from `<token>/logo`, so its bytes are not in a view, and each view works out its URL.
 */
async function brandWithLargestLogo(server: Server, key: string): Promise<void> {
  const logo = `data:image/png;base64,${pngOf(1, 1, [0x7a, 0x1f, 0x5c], 50 * 1024 - 200).toString('base64')}`;
  const res = await fetch(`${server.url}/v1/branding`, {
    method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Kaveri Handlooms', accent_color: '#7a1f5c', logo, support_url: 'https://kaveri.example.in/help' }),
  });
  if (res.status !== 200) throw new Error(`PUT /v1/branding → ${res.status} ${await res.text()}`);
}

export async function benchPage(): Promise<BenchResult[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-page-'));
  const servers: Server[] = [];
  try {
    const server = await tracked(servers, startServer('page', 'api.ts', serverEnv({
      DATA_DIR: dataDir, SANDBOX_HISTORY_SHIPMENTS: '0', TRACKING_PAGE_VIEWS_PER_MINUTE: '100000000', LOG_LEVEL: 'warn',
    }), null));
    const key = await createBenchKey(server);
    // The page's links name the address the server listens on (no PUBLIC_BASE_URL here).
    const pageUrl = await watchedPage(server, key);
    await brandWithLargestLogo(server, key);
    const results: BenchResult[] = [
      { name: '  (load average before)', value: round(loadavg()[0]!, 2), unit: 'runnable', target: null, pass: null },
    ];
    for (const lang of LANGS) {
      const url = `${pageUrl}?lang=${lang}`;
      const bytes = Buffer.byteLength(await (await fetch(url)).text());
      results.push({ name: `page bytes (${lang})`, value: bytes, unit: 'B', target: '<= 30720', pass: bytes <= 30_720 });
    }
    log(`warming, then ${DURATION_S} s of views`);
    await load(`${pageUrl}?lang=hi`, { duration: 2 }, 'page warm-up');
    const figures = await load(`${pageUrl}?lang=hi`, { duration: DURATION_S }, 'page views');
    const sorted = figures.latencies.sort((a, b) => a - b);
    const rps = round(figures.requestsPerSecond);
    const p99 = round(percentile(sorted, 99), 1);
    results.push(
      { name: 'page views from the cache (hi)', value: rps, unit: 'views/s', target: '>= 3000', pass: rps >= 3_000 },
      { name: 'page view p99', value: p99, unit: 'ms', target: '<= 20', pass: p99 <= 20 },
      { name: '  (load average after)', value: round(loadavg()[0]!, 2), unit: 'runnable', target: null, pass: null },
    );
    return results;
  } finally {
    for (const server of servers) await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
