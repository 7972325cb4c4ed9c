/**
 * The simulated network against published Indian figures (issue 40): every row of
 * lib/network/fidelity.ts inside its band on a seeded history, measured on the generated journeys,
 * not on the parameters.
 */
import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { loadPlaces } from '../places/index.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { SANDBOX_LANE_PINCODES } from '../sandbox/history.ts';
import { loadNetworkConfig } from './config.ts';
import { bandText, fidelityRows, fidelityTable, inBand, shipToDeliveryDays } from './fidelity.ts';
import { planHistory } from './history.ts';

const config = loadNetworkConfig();
const calendar = loadCalendar();
const places = loadPlaces();
const END = Date.parse('2026-11-27T00:00:00Z');
const history = (shipments: number, seed: number) =>
  [...planHistory({ shipments, days: 90, seed, endMs: END, sandboxLanes: SANDBOX_LANE_PINCODES, seededRandom }, config, calendar, places)];

const journeys = history(10_000, 1);
const rows = fidelityRows(journeys, config);

describe('the network against published figures', () => {
  it.each(rows.map((row) => [row.figure, row] as const))('%s: inside its published band', (_figure, row) => {
    expect(inBand(row), `${row.value} ${row.unit} against ${bandText(row)} (${row.published}, ${row.source})`).toBe(true);
  });

  it('has every figure the issue names, and the table marks a figure outside its band', () => {
    expect(rows.length).toBeGreaterThanOrEqual(17);
    const outside = { ...rows[0]!, value: 9 };
    expect(inBand(outside)).toBe(false);
    expect(fidelityTable([outside])).toContain('9 days ✗');
    expect(inBand({ ...rows[0]!, value: Number.NaN })).toBe(false);
  });

  it('carries Speed Post faster than India Post parcels on each of the ten lanes', () => {
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    for (let lane = 0; lane < 10; lane++) {
      const days = (carrier: string) =>
        journeys.filter((j) => j.carrier === carrier && j.sandboxLane === lane && j.outcome === 'delivered').map(shipToDeliveryDays);
      const speedPost = days('speedpost');
      const parcels = days('indiapost');
      expect(speedPost.length, `lane ${lane}`).toBeGreaterThan(10);
      expect(parcels.length, `lane ${lane}`).toBeGreaterThan(10);
      expect(median(speedPost), `lane ${lane}`).toBeLessThan(median(parcels));
    }
  });

  it('starts a 3,000-journey history at 100+ origin pincodes, some sellers selling much more than others', () => {
    const small = history(3_000, 7);
    const counts = new Map<string, number>();
    for (const j of small.filter((x) => x.sandboxLane === null)) counts.set(j.origin.pincode, (counts.get(j.origin.pincode) ?? 0) + 1);
    expect(counts.size).toBeGreaterThanOrEqual(100);
    const sorted = [...counts.values()].sort((a, b) => b - a);
    expect(sorted[0]!).toBeGreaterThan(10 * sorted[Math.floor(sorted.length / 2)]!);
  });
});
