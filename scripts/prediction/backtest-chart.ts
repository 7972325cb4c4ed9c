/**
 * A backtest summary (`npm run cli -- predict backtest … --json`) as a markdown chart: per stage
 * (and in transit per position), p80 and p90 coverage and the median window widths as bars, the
 * exact-day rate and the mean absolute error; a figure outside its target (issue 39's) is marked ⚠.
 *   npm run cli -- predict backtest --polls h.jsonl --split … --json > summary.json
 *   node scripts/prediction/backtest-chart.ts summary.json
 */
import { readFileSync } from 'node:fs';
import type { BacktestSummary, Scores } from '../../lib/prediction/index.ts';

const bar = (value: number | null, full: number, width = 20) => (value === null ? '' : '█'.repeat(Math.round((Math.min(value, full) / full) * width)));
const pct = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)} %`);
const mark = (text: string, ok: boolean) => (ok ? text : `${text} ⚠`);
/** Rows with fewer scored predictions are left out: their figures are noise. */
const MIN_ROW = 30;

/** Where a p80 window has a width target: in transit at the destination, out for delivery. */
function widthTarget(row: string): number | null {
  if (row === 'out_for_delivery') return 1;
  if (/^in_transit @ (destination_city|delivering_branch)$/.test(row)) return 2;
  return null;
}

function line(row: string, x: Scores): string {
  const within = (v: number | null, low: number, high: number) => v === null || (v >= low && v <= high);
  const width = widthTarget(row);
  const edd = x.carrier_edd.exact_day_rate;
  // The day's targets: overall (≥ 0.50 and the EDD's + 0.25, MAE ≤ 0.80), and out for delivery (that day ≥ 0.80).
  const exactOk = row === 'overall' ? x.exact_day_rate === null || (x.exact_day_rate >= 0.5 && (edd === null || x.exact_day_rate >= edd + 0.25))
    : row !== 'out_for_delivery' || x.exact_day_rate === null || x.exact_day_rate >= 0.8;
  const maeOk = row !== 'overall' || x.mean_absolute_error_days === null || x.mean_absolute_error_days <= 0.8;
  return [
    '', row, x.predictions,
    mark(pct(x.p80_coverage), within(x.p80_coverage, 0.78, 0.9)), `\`${bar(x.p80_coverage, 1)}\``,
    mark(pct(x.p90_coverage), within(x.p90_coverage, 0.88, 0.96)), `\`${bar(x.p90_coverage, 1)}\``,
    mark(String(x.p80_median_width_days ?? '—'), width === null || x.p80_median_width_days === null || x.p80_median_width_days <= width),
    `\`${bar(x.p80_median_width_days, 7, 7)}\``, x.p90_median_width_days ?? '—',
    mark(pct(x.exact_day_rate), exactOk),
    mark(String(x.mean_absolute_error_days ?? '—'), maeOk), '',
  ].join(' | ').trim();
}

export function chartOf(s: BacktestSummary): string {
  const rows: [string, Scores][] = [
    ...Object.entries(s.by_stage).filter(([, x]) => x.predictions >= MIN_ROW),
    ...Object.entries(s.in_transit_by_position ?? {}).filter(([, x]) => x.predictions >= MIN_ROW).map(([p, x]): [string, Scores] => [`in_transit @ ${p}`, x]),
    ['overall', s.overall],
  ];
  const lines = [
    `Backtest split at ${s.split}, ${s.overall.predictions} predictions scored. Targets (⚠: outside): p80 coverage 0.78–0.90, p90 0.88–0.96, ` +
      'median p80 width ≤ 1 day out for delivery and ≤ 2 in transit at the destination, out for delivery that day ≥ 0.80; overall exact day ' +
      '≥ 0.50 and ≥ the carrier EDD’s + 0.25, MAE ≤ 0.80 days. Rows with under 30 scored are left out.',
    ...(s.warnings ?? []).map((w) => `\nWarning: ${w}`),
    '',
    '| stage | scored | p80 coverage | | p90 coverage | | p80 width (days) | | p90 width (days) | exact day | MAE (days) |',
    '|---|---:|---:|---|---:|---|---:|---|---:|---:|---:|',
    ...rows.map(([row, x]) => line(row, x)),
  ];
  return lines.join('\n') + '\n';
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  process.stdout.write(chartOf(JSON.parse(readFileSync(process.argv[2] ?? 0, 'utf8')) as BacktestSummary));
}
