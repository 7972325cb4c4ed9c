/**
 * `npm start` on an empty DATA_DIR seeds a test-mode network history (lib/sandbox/seed.ts), so a
 * newcomer's first lookup of a free sandbox number shows its lane's benchmark and `GET /v1/lanes`
 * of a README lane lists carriers with figures, within 10 s of the start; a live key sees none of it.
 *
 * Runs what `npm start` runs as a real process with none of the project's variables set (testutil/harness.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUp, start, stop } from './testutil/harness.ts';

describe('npm start: the network history of a first start', () => {
  let dataDir: string | undefined;
  afterAll(() => cleanUp(dataDir));

  it('shows a benchmark and lane figures on its first requests; live keys see no sandbox history', { timeout: 120_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-history-'));
    const startedAt = performance.now();
    const running = await start(dataDir);
    // A first start: the trial key is printed whole.
    const headers = { 'x-api-key': running.trialKey! };

    // SS 27 is a free number (sandbox.md): lane 01, Mumbai → Kolkata, on the network.
    const lookup = await fetch(`${running.base}/v1/track/delhivery/1234567890127`, { headers });
    expect(lookup.status).toBe(200);
    const record = await lookup.json() as { insights: { benchmark: { median_transit_days_for_route: number; sample_size: number } | null } };
    const lanes = await fetch(`${running.base}/v1/lanes/400001/700001`, { headers });
    const answer = await lanes.json() as { carriers: { carrier: string; sample_size: number; p50_transit_days: number | null }[] };
    const elapsed = performance.now() - startedAt;

    expect(record.insights.benchmark, JSON.stringify(record.insights)).not.toBeNull();
    expect(record.insights.benchmark!.sample_size).toBeGreaterThanOrEqual(30);
    expect(lanes.status).toBe(200);
    const withFigures = answer.carriers.filter((c) => c.sample_size >= 30 && c.p50_transit_days !== null);
    // Every national carrier serves Mumbai → Kolkata (the regional ones do not).
    expect(withFigures.map((c) => c.carrier).sort()).toEqual(['bluedart', 'delhivery', 'dtdc', 'ekart', 'indiapost', 'shadowfax', 'shiprocket', 'speedpost', 'xpressbees']);
    // The 10 s is a figure for a quiet machine, measured on the benchmarks page
    // (docs/engineers/benchmarks.md "First start"); a test on a shared machine only checks the seed
    // belongs to the start (figures on the first requests), with a bound no healthy start comes near.
    expect(elapsed, `${Math.round(elapsed)} ms from spawn to figures, load average ${loadavg()[0]!.toFixed(1)}`).toBeLessThan(60_000);

    // A live key of the same process: real lanes only, so none.
    const adminToken = /ADMIN_TOKEN:\s+(\S+)/.exec(running.output())![1]!;
    const created = await fetch(`${running.base}/admin/keys`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'starter', mode: 'live', email: 'live@example.com' }),
    });
    const { key: liveKey } = await created.json() as { key: string };
    const live = await (await fetch(`${running.base}/v1/lanes/400001/700001`, { headers: { 'x-api-key': liveKey } })).json() as { carriers: unknown[] };
    expect(live.carriers).toEqual([]);

    expect(await stop(running)).toEqual({ code: 0, signal: null });
  });
});
