/**
 * `npm start` keeps its derived state in DATA_DIR/checkpoint.bin (lib/pipeline/embedded.ts): the
 * first start replays the seeded history once and writes it; a restart loads it, reads none of
 * the log (its clean shutdown wrote a checkpoint covering every poll) and shows the same lane
 * figures. Runs what `npm start` runs as a real process (testutil/harness.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointPath } from '../../lib/pipeline/checkpoint.ts';
import { cleanUp, start, stop } from './testutil/harness.ts';

describe('npm start: a restart from the checkpoint', () => {
  let dataDir: string | undefined;
  afterAll(() => cleanUp(dataDir));

  it('the first start replays the history once and writes the checkpoint; a restart reads no log and shows the same lane figures', { timeout: 300_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-checkpoint-'));
    const first = await start(dataDir);
    expect(first.output()).toMatch(/rebuilding the embedded state from the whole raw-poll log/);
    expect(first.output()).toMatch(/embedded state: rebuilt from \d+ polls of the raw-poll log/);
    expect(existsSync(checkpointPath(dataDir))).toBe(true);
    const headers = { 'x-api-key': first.trialKey! };
    const lanes = async (base: string) => (await fetch(`${base}/v1/lanes/400001/700001`, { headers })).json() as Promise<{ carriers: unknown[] }>;
    const before = await lanes(first.base);
    expect(before.carriers.length).toBeGreaterThan(0);
    expect(await stop(first)).toEqual({ code: 0, signal: null });

    const second = await start(dataDir);
    // The whole state from the checkpoint: not one poll of the log read again.
    expect(second.output()).toMatch(/embedded state: checkpoint to byte \d+ loaded \(\d+ ms\), 0 polls of the log's tail read/);
    expect(second.output()).not.toMatch(/rebuilding the embedded state/);
    expect(await lanes(second.base)).toEqual(before);
    expect(await stop(second)).toEqual({ code: 0, signal: null });
  });
});
