/**
 * npm run bench -- mapping: the share of `unknown` events per carrier over every body the project
 * keeps (lib/testutil/carrier-corpus.ts: the copies of the shared real bodies and the bodies written
 * in their shape), parsed and mapped with the shipped rules. Target 0 % for each carrier (issue 35);
 * the unknown texts are listed under the figures so a regression names its scan.
 */
import { loadProduct } from '../lib/product/index.ts';
import { mappingShares, unknownPercent } from '../lib/testutil/carrier-corpus.ts';
import type { BenchResult } from './report.ts';

export async function benchMapping(): Promise<BenchResult[]> {
  const { rules } = loadProduct();
  const shares = mappingShares(rules);
  const results: BenchResult[] = [];
  for (const share of shares) {
    const percent = unknownPercent(share);
    results.push({
      name: `${share.carrier}: unknown events (${share.unknown.length} of ${share.events}, ${share.found}/${share.bodies} bodies found)`,
      value: percent, unit: '%', target: '= 0', pass: percent === 0,
    });
  }
  const total = shares.reduce((n, s) => n + s.events, 0);
  const unknown = shares.reduce((n, s) => n + s.unknown.length, 0);
  const percent = total === 0 ? 0 : Math.round((unknown / total) * 1000) / 10;
  results.push({ name: `all carriers: unknown events (${unknown} of ${total})`, value: percent, unit: '%', target: '= 0', pass: unknown === 0 });
  for (const { file, text, code } of shares.flatMap((s) => s.unknown)) console.log(`unknown: ${file}: "${text}"${code ? ` (code ${code})` : ''}`);
  return results;
}
