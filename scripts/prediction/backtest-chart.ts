/**
 * A backtest summary (`npm run cli -- predict backtest … --json`) as a markdown chart: per stage,
 * p80 and p90 coverage against their targets and the median window widths, as bars.
 *   npm run cli -- predict backtest --polls h.jsonl --split … --json | node scripts/prediction/backtest-chart.ts
 */
import { readFileSync } from 'node:fs';
import type { BacktestSummary, Scores } from '../../lib/prediction/index.ts';

const bar = (value: number | null, full: number, width = 20) => (value === null ? '' : '█'.repeat(Math.round((Math.min(value, full) / full) * width)));
const pct = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)} %`);

export function chartOf(s: BacktestSummary): string {
  const rows: [string, Scores][] = [...Object.entries(s.by_stage).filter(([, x]) => x.predictions > 0), ['overall', s.overall]];
  const lines = [
    `Backtest split at ${s.split}, ${s.overall.predictions} predictions scored (targets: p80 0.78–0.90, p90 0.88–0.96, p80 width ≤ 3 days).`,
    '',
    '| stage | scored | p80 coverage | | p90 coverage | | p80 width (days) | | p90 width (days) |',
    '|---|---:|---:|---|---:|---|---:|---|---:|',
    ...rows.map(([stage, x]) => `| ${stage} | ${x.predictions} | ${pct(x.p80_coverage)} | \`${bar(x.p80_coverage, 1)}\` | ${pct(x.p90_coverage)} | \`${bar(x.p90_coverage, 1)}\` | ${x.p80_median_width_days ?? '—'} | \`${bar(x.p80_median_width_days, 7, 7)}\` | ${x.p90_median_width_days ?? '—'} |`),
  ];
  return lines.join('\n') + '\n';
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  process.stdout.write(chartOf(JSON.parse(readFileSync(process.argv[2] ?? 0, 'utf8')) as BacktestSummary));
}
