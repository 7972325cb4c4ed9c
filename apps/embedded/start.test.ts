/**
 * On a fresh clone, `npm install && npm start` serves the printed curl line successfully — and a
 * restart on the same DATA_DIR loses no keys and no usage (contracts.md "Starting it"), makes no
 * second trial key and keeps the admin token it generated and printed at the first start.
 *
 * Runs what `npm start` runs (`node <heap policy> apps/embedded/main.ts`) as a real process, with none of the
 * project's environment variables set but a temp DATA_DIR and a free PORT, and the printed curl line
 * with the real curl.
 */
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TrackingRecordSchema } from '../../lib/schemas/index.ts';
import { cleanUp, shell, start, stop, usage } from './testutil/harness.ts';

describe('npm start (the embedded default)', () => {
  let dataDir: string | undefined;

  afterAll(() => cleanUp(dataDir));

  it('serves the printed curl line; SIGTERM exits 0; a restart keeps the key and its usage', { timeout: 300_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-'));
    const first = await start(dataDir);
    expect(first.curlLine).toMatch(/^curl -s -H "X-API-Key: trk_test_[A-Za-z0-9]{32}" http:\/\/127\.0\.0\.1:\d+\/v1\/track\/\S+$/);

    // The printed line, run as printed; `-w` only appends the status code after the body.
    const out = await shell(`${first.curlLine} -w '\\n%{http_code}'`);
    const cut = out.lastIndexOf('\n');
    const [body, status] = [out.slice(0, cut), out.slice(cut + 1)];
    expect(status, body).toBe('200');
    const record = TrackingRecordSchema.safeParse(JSON.parse(body));
    expect(record.success ? [] : record.error.issues).toEqual([]);
    expect(first.curlLine).toContain(`/v1/track/${record.data!.carrier}/${record.data!.awb}`);

    const trialKey = first.trialKey!;
    expect(trialKey, first.output()).not.toBeNull();
    // The generated admin token: printed at the first start, kept in DATA_DIR readable by its owner only.
    const token = /^\s*ADMIN_TOKEN:\s+(\S+)\s+\(generated at this first start/m.exec(first.output())?.[1];
    expect(token, first.output()).toBeDefined();
    expect(await readFile(join(dataDir, 'admin-token'), 'utf8')).toBe(`${token}\n`);
    expect((await stat(join(dataDir, 'admin-token'))).mode & 0o777).toBe(0o600);

    // One registry for the process: /metrics shows the API, its in-process normalizer, poller and webhook dispatcher.
    const metrics = await (await fetch(`${first.base}/metrics`)).text();
    for (const family of ['tracking_lookups_total', 'normalizer_polls_consumed_total', 'poller_ticks_total', 'webhook_delivery_attempts_total']) {
      expect(metrics).toContain(`# TYPE ${family} `);
    }
    expect(Number(/^normalizer_polls_consumed_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(0);

    const before = await usage(first.base, trialKey);
    expect(before).toMatchObject({ plan: 'trial', status: 'active', period: { lookups_used: 1, lookups_limit: 100, lookups_remaining: 99 } });

    expect(await stop(first)).toEqual({ code: 0, signal: null });

    // Started again on the same DATA_DIR: the earlier key works, with the lookup counted before.
    const second = await start(dataDir);
    // No second trial key, no token printed again: the first key's prefix, and where the token is kept.
    expect(second.trialKey).toBeNull();
    expect(second.output()).toContain(`trial key:   ${before.key_prefix}…`);
    expect(second.output()).not.toContain(token!);
    expect(second.output()).toMatch(/ADMIN_TOKEN: kept in \S+admin-token since the first start/);
    const after = await usage(second.base, trialKey);
    expect(after).toEqual(before);
    const again = await fetch(`${second.base}/v1/track/delhivery/1234567890102`, { headers: { 'x-api-key': trialKey } });
    expect(again.status).toBe(200);
    expect(TrackingRecordSchema.safeParse(await again.json()).success).toBe(true);
    expect((await usage(second.base, trialKey)).period).toMatchObject({ lookups_used: 2, lookups_remaining: 98 });
    // The token in use is still the one printed at the first start.
    const shown = await fetch(`${second.base}/admin/keys/${before.key_prefix}`, { headers: { authorization: `Bearer ${token}` } });
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({ key_prefix: before.key_prefix, email: 'quickstart@example.com' });

    expect(await stop(second)).toEqual({ code: 0, signal: null });
  });
});
