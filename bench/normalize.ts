/** Normalization throughput: carrier_poll.v1 → tracking record (+ insights), one core, in process. */
import { toTrackingRecord } from '../lib/insights/index.ts';
import { normalizePoll } from '../lib/normalize/index.ts';
import { loadProduct } from '../lib/product/index.ts';
import { JOURNEYS, journeyPoll } from '../lib/testutil/polls.ts';
import type { BenchResult } from './report.ts';

export const TARGET_SCANS_PER_SECOND = 100_000;

export async function benchNormalize(): Promise<BenchResult[]> {
  const { rules } = loadProduct();
  const carriers = Object.keys(JOURNEYS);
  const polls = Array.from({ length: 10_000 }, (_, i) => journeyPoll(carriers[i % carriers.length]!, i));
  const scansPerPass = polls.reduce((n, p) => n + p.scans.length, 0);

  // Worst case for the text caches: every scan carries a remark never seen before.
  const distinctPolls = polls.map((poll, i) => ({
    ...poll,
    scans: poll.scans.map((scan, j) => ({ ...scan, remarks: `${scan.remarks ?? 'Scan'} ref ${i}-${j}` })),
  }));

  const pass = (withInsights: boolean, input = polls) => {
    for (const poll of input) {
      const result = normalizePoll(poll, rules);
      if (withInsights && result.kind === 'found') {
        toTrackingRecord(result.shipment.record, result.shipment.facts, { nowMs: Date.parse(poll.polled_at), lane: null, cached: false, stale: false });
      }
    }
  };
  const measure = (withInsights: boolean, input = polls) => {
    pass(withInsights, input); // warm-up: JIT and the rule caches
    const passes = 5;
    const started = process.hrtime.bigint();
    for (let i = 0; i < passes; i++) pass(withInsights, input);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return (scansPerPass * passes) / seconds;
  };

  const normalizeOnly = measure(false);
  const withInsights = measure(true);
  const distinctRemarks = measure(true, distinctPolls);
  return [
    { name: 'normalization (scans/s, one core)', value: Math.round(normalizeOnly), unit: 'scans/s', target: `>= ${TARGET_SCANS_PER_SECOND}`, pass: normalizeOnly >= TARGET_SCANS_PER_SECOND },
    { name: 'normalization + insights (scans/s, one core)', value: Math.round(withInsights), unit: 'scans/s', target: `>= ${TARGET_SCANS_PER_SECOND}`, pass: withInsights >= TARGET_SCANS_PER_SECOND },
    { name: 'normalization + insights, every remark distinct (scans/s)', value: Math.round(distinctRemarks), unit: 'scans/s', target: null, pass: null },
  ];
}
