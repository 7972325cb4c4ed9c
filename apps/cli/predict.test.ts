/**
 * `predict backtest --from-embedded`: the embedded default's raw-poll log under DATA_DIR as the
 * source (read twice: learn, then predict), scored like a file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCalendar } from '../../lib/calendar/index.ts';
import { otherNetworkPolls } from '../../lib/prediction/testutil/other-network.ts';
import type { BacktestSummary } from '../../lib/prediction/index.ts';
import { PollLog } from '../../lib/store/poll-log.ts';
import { DAY_MS } from '../../lib/time/index.ts';
import { chartOf } from '../../scripts/prediction/backtest-chart.ts';
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

  it('warns on stderr (and in the summary) when the split leaves nothing to learn from and too few predictions to score', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'predict-embedded-'));
    dirs.push(dir);
    const polls = [...otherNetworkPolls({ shipments: 200, days: 20, seed: 43, calendar: loadCalendar(), startMs: START })];
    const log = new PollLog(dir);
    for (const poll of polls) log.append({ poll, mode: 'live' });
    await log.flush();
    vi.stubEnv('DATA_DIR', dir);
    let out = '';
    let err = '';
    const io = { env: {}, stdout: (t: string) => { out += t; }, stderr: (t: string) => { err += t; } } as unknown as CliIo;
    // A split before the history began: the documented mistake that used to score nothing in silence.
    const code = await runPredict(['backtest', '--from-embedded', '--split', new Date(START - 5 * DAY_MS).toISOString(),
      '--since', new Date(START - 30 * DAY_MS).toISOString(), '--json'], io);
    expect(code, err).toBe(0);
    const summary = JSON.parse(out) as BacktestSummary;
    expect(summary.polls_before_split).toBe(0);
    expect(summary.warnings).toEqual([
      expect.stringMatching(/^no polls before --split .*: the model had nothing to learn from \(the polls run from 2026-0/),
      expect.stringMatching(/^only 0 predictions scored \(fewer than 500\)/),
    ]);
    expect(err).toContain('warning: no polls before --split');
    expect(err).toContain('warning: only 0 predictions scored');
  }, 60_000);
});

describe('the backtest chart', () => {
  const scores = (p80: number, p90: number, width: number, exact: number, mae: number) => ({
    predictions: 1000, p80_coverage: p80, p90_coverage: p90, p80_median_width_days: width, p90_median_width_days: width + 1,
    exact_day_rate: exact, mean_absolute_error_days: mae,
    carrier_edd: { polls: 1000, exact_day_rate: 0.2, mean_absolute_error_days: 1.5 }, lane_benchmark: { polls: 1000, exact_day_rate: 0.3, mean_absolute_error_days: 1 },
  });
  it('marks each figure outside its target, and only those', () => {
    const summaryOf = (overall: ReturnType<typeof scores>) => ({
      split: '2026-05-16T18:30:00.000Z', model_at: '2026-05-16T18:30:00.000Z', trained_on_shipments: 1, polls_before_split: 1, polls_at_or_after_split: 1,
      in_transit_polls: 1, in_transit_predicted_share: 1, warnings: [], overall, by_stage: {}, in_transit_by_position: {},
    });
    const chart = chartOf({
      ...summaryOf(scores(0.85, 0.92, 2, 0.6, 0.5)),
      by_stage: { in_transit: scores(0.85, 0.92, 3, 0.6, 0.5), out_for_delivery: scores(0.76, 0.97, 2, 0.8, 0.2) },
      in_transit_by_position: { destination_city: scores(0.8, 0.9, 3, 0.4, 0.9) },
    });
    const row = (name: string) => chart.split('\n').find((l) => l.startsWith(`| ${name} |`))!;
    expect(row('in_transit')).not.toContain('⚠');
    expect(row('overall')).not.toContain('⚠');
    // Out for delivery: p80 under 0.78, p90 over 0.96, a p80 window wider than one day (its day, 0.8, is on target).
    expect(row('out_for_delivery')).toContain('76.0 % ⚠');
    expect(row('out_for_delivery')).toContain('97.0 % ⚠');
    expect(row('out_for_delivery')).toContain('| 2 ⚠ |');
    expect(row('out_for_delivery').match(/⚠/g)).toHaveLength(3);
    // In transit at the destination: wider than 2 days (the day's targets are the overall row's).
    expect(row('in_transit @ destination_city').match(/⚠/g)).toHaveLength(1);
    const poor = chartOf({ ...summaryOf(scores(0.85, 0.92, 2, 0.4, 0.9)) });
    expect(poor.split('\n').find((l) => l.startsWith('| overall |'))!.match(/⚠/g)).toHaveLength(2);
  });
});

