/**
 * The network model's properties, measured on generated journeys (not on its constants): transit
 * grows with distance, nobody picks up or delivers on a rest day, COD fails more, EDDs are met less
 * often than promised, remote pincodes are slower, and a seed repeats its history exactly.
 */
import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { ConfigError } from '../config/index.ts';
import { loadPlaces, type Place } from '../places/index.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { historyPolls } from '../sandbox/history.ts';
import { istDayOf, weekdayOf } from '../time/ist-day.ts';
import { NetworkConfigSchema, loadNetworkConfig } from './config.ts';
import { planHistory, type HistoryJourney } from './history.ts';
import { simulateJourney, type Journey } from './journey.ts';
import { SANDBOX_LANE_PINCODES } from '../sandbox/history.ts';

const config = loadNetworkConfig();
const calendar = loadCalendar();
const places = loadPlaces();
const END = Date.parse('2026-11-27T00:00:00Z');

function history(shipments: number, seed = 11, days = 120): HistoryJourney[] {
  return [...planHistory({ shipments, days, seed, endMs: END, sandboxLanes: SANDBOX_LANE_PINCODES, seededRandom }, config, calendar, places)];
}

/** Spearman's rank correlation (average ranks for ties). */
function spearman(xs: number[], ys: number[]): number {
  const rank = (v: number[]) => {
    const order = v.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
    const r = new Array<number>(v.length);
    for (let i = 0; i < order.length;) {
      let j = i;
      while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
      for (let k = i; k <= j; k++) r[order[k]![1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const rx = rank(xs);
  const ry = rank(ys);
  const mean = (rx.length - 1) / 2;
  let num = 0, dx = 0, dy = 0;
  for (let i = 0; i < rx.length; i++) {
    num += (rx[i]! - mean) * (ry[i]! - mean);
    dx += (rx[i]! - mean) ** 2;
    dy += (ry[i]! - mean) ** 2;
  }
  return num / Math.sqrt(dx * dy);
}

const transitDays = (j: Journey) => (j.deliveredAt! - j.pickedUpAt) / 86_400_000;
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const journeys = history(6000);
const delivered = journeys.filter((j) => j.outcome === 'delivered' && j.closedAt < END);

describe('the network model', () => {
  it('transit grows with great-circle distance (Spearman ρ > 0.5 per surface carrier, over all > 0.5)', () => {
    expect(delivered.length).toBeGreaterThan(4000);
    expect(spearman(delivered.map((j) => j.distanceKm), delivered.map(transitDays))).toBeGreaterThan(0.5);
    for (const carrier of ['delhivery', 'ekart', 'xpressbees']) {
      const own = delivered.filter((j) => j.carrier === carrier && j.serviceType === 'surface');
      expect(own.length, carrier).toBeGreaterThan(150);
      expect(spearman(own.map((j) => j.distanceKm), own.map(transitDays)), carrier).toBeGreaterThan(0.5);
    }
  });

  it('has a heavy tail: p99 transit is far above the median', () => {
    const days = delivered.filter((j) => j.carrier === 'delhivery').map(transitDays).sort((a, b) => a - b);
    expect(days[Math.floor(days.length * 0.99)]!).toBeGreaterThan(2 * median(days));
  });

  it('never picks up or delivers on a Sunday or a listed holiday for carriers that rest then', () => {
    let checked = 0;
    let sundays = 0;
    for (const j of journeys) {
      for (const step of j.steps) {
        const end = step.kind === 'picked_up' ? j.origin : ['out_for_delivery', 'delivered', 'attempt_failed'].includes(step.kind) ? j.destination : null;
        if (!end) continue;
        const day = istDayOf(step.at);
        checked++;
        if (weekdayOf(day) === 0) {
          sundays++;
          expect(calendar.deliversOnSunday(j.carrier), `${j.carrier} ${step.kind} on Sunday ${day}`).toBe(true);
        }
        expect(calendar.holidaysOn(day, end.stateCode), `${j.carrier} ${step.kind} ${day} in ${end.stateCode}`).toEqual([]);
      }
    }
    expect(checked).toBeGreaterThan(10_000);
    // The Sunday carriers (config/calendar.yaml) do work Sundays: the check above is not vacuous.
    expect(sundays).toBeGreaterThan(0);
  });

  it('fails COD deliveries more often than prepaid ones', () => {
    const origin = places.placeOf('110001')!;
    const destinations = ['560001', '400001', '700001', '226001', '302001'].map((p) => places.placeOf(p)!);
    const failedShare = (cod: boolean) => {
      let failed = 0;
      for (let i = 0; i < 3000; i++) {
        const j = simulateJourney({ carrier: 'delhivery', origin, destination: destinations[i % 5]!, zone: places.zoneOf(origin, destinations[i % 5]!), bookedAt: END - 40 * 86_400_000 + i * 600_000, random: seededRandom(i + 1), cod }, config, calendar);
        if (j.steps.some((s) => s.kind === 'attempt_failed')) failed++;
      }
      return failed / 3000;
    };
    const cod = failedShare(true);
    const prepaid = failedShare(false);
    expect(cod).toBeGreaterThan(prepaid * 1.5);
    expect(prepaid).toBeGreaterThan(0);
  });

  it('meets each carrier\'s EDD less often than the carrier claims, but usually', () => {
    for (const carrier of Object.keys(config.carriers)) {
      const own = delivered.filter((j) => j.carrier === carrier);
      expect(own.length, carrier).toBeGreaterThan(60);
      const onTime = own.filter((j) => j.deliveredAt! <= j.edd).length / own.length;
      const claimed = config.profiles[config.carriers[carrier]!.profile]!.promise.claimed_on_time;
      expect(onTime, carrier).toBeLessThan(claimed);
      expect(onTime, carrier).toBeGreaterThan(0.45);
    }
  });

  it('is slower to remote pincodes (the same lanes with the remote mark taken off are faster)', () => {
    const origin = places.placeOf('700001')!;
    const remote = ['781001', '793001', '737101', '799001'].map((p) => places.placeOf(p)!);
    expect(remote.every((p) => p.remote)).toBe(true);
    const transit = (destinations: Place[]) => {
      const days: number[] = [];
      for (let i = 0; i < 2000; i++) {
        const j = simulateJourney({ carrier: 'xpressbees', origin, destination: destinations[i % destinations.length]!, zone: places.zoneOf(origin, destinations[i % destinations.length]!), bookedAt: END - 60 * 86_400_000 + i * 900_000, random: seededRandom(7_000 + i) }, config, calendar);
        if (j.deliveredAt) days.push(transitDays(j));
      }
      return median(days);
    };
    expect(transit(remote)).toBeGreaterThan(transit(remote.map((p) => ({ ...p, remote: false }))) + 0.8);
  });

  it('serves a regional carrier\'s history only inside its region', () => {
    for (const j of journeys.filter((x) => x.carrier === 'professionalcouriers' || x.carrier === 'shreemaruti')) {
      const states = config.carriers[j.carrier]!.states!;
      expect(states).toContain(j.origin.stateCode);
      expect(states).toContain(j.destination.stateCode);
    }
  });

  it('gives every carrier serving one of sandbox.md\'s ten lanes 30+ deliveries there in 20,000 journeys', () => {
    const big = history(20_000, 1, 90).filter((j) => j.outcome === 'delivered' && j.closedAt < END && j.sandboxLane !== null);
    const counts = new Map<string, number>();
    for (const j of big) counts.set(`${j.sandboxLane}:${j.carrier}`, (counts.get(`${j.sandboxLane}:${j.carrier}`) ?? 0) + 1);
    expect(counts.size).toBeGreaterThanOrEqual(10 * 9);
    for (const [pair, n] of counts) expect(n, pair).toBeGreaterThanOrEqual(30);
  });

  it('repeats a seed\'s raw-poll log exactly, and another seed differs', async () => {
    const log = async (seed: number) => {
      const lines: string[] = [];
      for await (const { polls } of historyPolls({ config, calendar, places, shipments: 300, days: 30, seed, endMs: END })) lines.push(...polls.map((p) => JSON.stringify(p)));
      return lines;
    };
    const first = await log(5);
    expect(first.length).toBeGreaterThan(600);
    expect(await log(5)).toEqual(first);
    expect(await log(6)).not.toEqual(first);
  });

  it('refuses a bad parameter with its field named', () => {
    const bad = { ...NetworkConfigSchema.parse(config), hold: { ...config.hold, probability: 2 } };
    const result = NetworkConfigSchema.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(['hold', 'probability']);
    const unordered = { ...config, returns: { ...config.returns, by_days_to_first_attempt: [{ up_to: 5, factor: 1 }, { up_to: 2, factor: 1 }] } };
    expect(NetworkConfigSchema.safeParse(unordered).error!.issues[0]!.path).toEqual(['returns', 'by_days_to_first_attempt']);
    expect(() => loadNetworkConfig('/nonexistent')).toThrow(ConfigError);
  });
});
