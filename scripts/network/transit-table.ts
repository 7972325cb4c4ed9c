/**
 * Transit by distance band in a generated history, as a Markdown table (docs/engineers/network-model.md):
 * delivered journeys' pickup → delivery days, p50 / p90 per carrier profile, and the share
 * delivered by the carrier's EDD.
 *
 *   node scripts/network/transit-table.ts [--journeys 50000] [--seed 1] [--end 2026-11-27T00:00:00Z]
 */
import { parseArgs } from 'node:util';
import { loadCalendar } from '../../lib/calendar/index.ts';
import { loadNetworkConfig } from '../../lib/network/config.ts';
import { planHistory } from '../../lib/network/history.ts';
import { loadPlaces } from '../../lib/places/index.ts';
import { SANDBOX_LANE_PINCODES } from '../../lib/sandbox/history.ts';
import { seededRandom } from '../../lib/random/seeded-random.ts';
import { DAY_MS } from '../../lib/time/index.ts';

const { values } = parseArgs({ options: { journeys: { type: 'string', default: '50000' }, seed: { type: 'string', default: '1' }, end: { type: 'string', default: '2026-11-27T00:00:00Z' } } });
const config = loadNetworkConfig();
const endMs = Date.parse(values.end!);
const BANDS = [[0, 50], [50, 300], [300, 800], [800, 1500], [1500, 2500], [2500, Infinity]] as const;
const PROFILES = Object.keys(config.profiles);
const cells = new Map<string, number[]>();
const onTime = new Map<number, [number, number]>();
let total = 0;
for (const j of planHistory({ shipments: Number(values.journeys), days: 90, seed: Number(values.seed), endMs, sandboxLanes: SANDBOX_LANE_PINCODES, seededRandom }, config, loadCalendar(), loadPlaces())) {
  if (j.outcome !== 'delivered' || j.closedAt >= endMs) continue;
  total++;
  const band = BANDS.findIndex(([low, high]) => j.distanceKm >= low && j.distanceKm < high);
  const key = `${band}:${config.carriers[j.carrier]!.profile}`;
  let list = cells.get(key);
  if (!list) cells.set(key, (list = []));
  list.push((j.deliveredAt! - j.pickedUpAt) / DAY_MS);
  const [met, all] = onTime.get(band) ?? [0, 0];
  onTime.set(band, [met + (j.deliveredAt! <= j.edd ? 1 : 0), all + 1]);
}
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const label = ([low, high]: readonly [number, number]) => (high === Infinity ? `≥ ${low} km` : `${low}–${high} km`);
const lines = [
  `Delivered journeys: ${total.toLocaleString('en-US')} of ${Number(values.journeys).toLocaleString('en-US')} (seed ${values.seed}, 90 days to ${values.end}); days from pickup to delivery, p50 / p90 (n).`,
  '',
  `| distance | ${PROFILES.map((p) => p.replaceAll('_', ' ')).join(' | ')} | delivered by the EDD |`,
  `| --- |${PROFILES.map(() => ' --- |').join('')} --- |`,
];
BANDS.forEach((band, i) => {
  const row = PROFILES.map((p) => {
    const list = cells.get(`${i}:${p}`)?.sort((a, b) => a - b);
    return list && list.length >= 20 ? `${quantile(list, 0.5).toFixed(1)} / ${quantile(list, 0.9).toFixed(1)} (${list.length})` : '—';
  });
  const [met, all] = onTime.get(i) ?? [0, 0];
  lines.push(`| ${label(band)} | ${row.join(' | ')} | ${all ? `${Math.round((100 * met) / all)} %` : '—'} |`);
});
console.log(lines.join('\n'));
