/**
 * `predict backtest --from-embedded`: the embedded default's raw-poll log under DATA_DIR as the
 * source (read twice: learn, then predict), scored like a file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCalendar } from '../../lib/calendar/index.ts';
import { otherNetworkPolls } from '../../lib/prediction/testing/other-network.ts';
import type { BacktestSummary } from '../../lib/prediction/index.ts';
import { PollLog } from '../../lib/store/poll-log.ts';
import { DAY_MS } from '../../lib/time/index.ts';
import { runPredict } from './commands/predict.ts';
import type { CliIo } from './commands/io.ts';

const START = Date.parse('2026-03-01T00:00:00+05:30');

describe('predict backtest --from-embedded', () => {
  const dirs: string[] = [];
  afterEach(() => { vi.unstubAllEnvs(); for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

  it('learns from the log before --split and writes one prediction line per poll at or after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'predict-embedded-'));
    dirs.push(dir);
    const polls = [...otherNetworkPolls({ shipments: 1500, days: 40, seed: 41, calendar: loadCalendar(), startMs: START })];
    const log = new PollLog(dir);
    for (const poll of polls) log.append({ poll, mode: 'live' });
    await log.flush();
    vi.stubEnv('DATA_DIR', dir);
    const split = START + 30 * DAY_MS;
    let out = '';
    let err = '';
    const io = { env: {}, stdout: (t: string) => { out += t; }, stderr: (t: string) => { err += t; } } as unknown as CliIo;
    const predictions = join(dir, 'p.jsonl');
    const code = await runPredict(['backtest', '--from-embedded', '--split', new Date(split).toISOString(), '--since', new Date(START - DAY_MS).toISOString(), '--predictions', predictions, '--json'], io);
    expect(code, err).toBe(0);
    const summary = JSON.parse(out) as BacktestSummary;
    const after = polls.filter((p) => Date.parse(p.polled_at) >= split).length;
    expect(summary.polls_at_or_after_split).toBe(after);
    expect(readFileSync(predictions, 'utf8').trim().split('\n')).toHaveLength(after);
    expect(summary.overall.predictions).toBeGreaterThan(500);
    expect(summary.overall.p80_coverage!).toBeGreaterThanOrEqual(0.72);
    expect(summary.overall.p90_coverage!).toBeGreaterThanOrEqual(0.82);
  }, 120_000);
});
