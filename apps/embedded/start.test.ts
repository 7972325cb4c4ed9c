/**
 * On a fresh clone, `npm install && npm start` serves the printed curl line successfully — and a
 * restart on the same DATA_DIR loses no keys and no usage (contracts.md "Starting it").
 *
 * Runs what `npm start` runs (`node <heap policy> apps/embedded/main.ts`) as a real process, with none of the
 * project's environment variables set but a temp DATA_DIR and a free PORT, and the printed curl line
 * with the real curl.
 */
import { mkdtemp } from 'node:fs/promises';
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

    const before = await usage(first.base, first.trialKey);
    expect(before).toMatchObject({ plan: 'trial', status: 'active', period: { lookups_used: 1, lookups_limit: 100, lookups_remaining: 99 } });

    expect(await stop(first)).toEqual({ code: 0, signal: null });

    // Started again on the same DATA_DIR: the earlier key works, with the lookup counted before.
    const second = await start(dataDir);
    expect(second.trialKey).not.toBe(first.trialKey);
    const after = await usage(second.base, first.trialKey);
    expect(after).toEqual(before);
    const again = await fetch(`${second.base}/v1/track/delhivery/1234567890102`, { headers: { 'x-api-key': first.trialKey } });
    expect(again.status).toBe(200);
    expect(TrackingRecordSchema.safeParse(await again.json()).success).toBe(true);
    expect((await usage(second.base, first.trialKey)).period).toMatchObject({ lookups_used: 2, lookups_remaining: 98 });
    // The new run's own key works too.
    expect((await usage(second.base, second.trialKey)).period.lookups_used).toBe(0);

    expect(await stop(second)).toEqual({ code: 0, signal: null });
  });
});
