/**
 * `predict backtest --from-clickhouse`: carrier_polls as the source (the normalizer's rows of the
 * same polls), against the real ClickHouse; and the backtest's coverage on the sandbox's own
 * network (lib/sandbox historyPolls), the first generator, at modest size.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadCalendar } from '../../lib/calendar/index.ts';
import { ClickHouseWriter } from '../../lib/clickhouse/writer.ts';
import { createTestDatabase, TEST_CLICKHOUSE_URL, type TestDatabase } from '../../lib/clickhouse/testutil/database.ts';
import { loadNetworkConfig } from '../../lib/network/config.ts';
import { processPollMessage } from '../../lib/pipeline/process-poll.ts';
import { loadPlaces } from '../../lib/places/index.ts';
import { backtest, placeLookupOf, WorkdayIndex, type BacktestSummary } from '../../lib/prediction/index.ts';
import { otherNetworkPolls } from '../../lib/prediction/testutil/other-network.ts';
import { historyPolls } from '../../lib/sandbox/history.ts';
import type { CarrierPoll } from '../../lib/schemas/index.ts';
import { product } from '../../lib/testutil/product.ts';
import { DAY_MS } from '../../lib/time/index.ts';
import type { CliIo } from './commands/io.ts';
import { runPredict } from './commands/predict.ts';

const START = Date.parse('2026-03-01T00:00:00+05:30');
const calendar = loadCalendar();

describe('predict backtest --from-clickhouse', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { vi.unstubAllEnvs(); await db?.drop(); });

  it('reads carrier_polls twice and scores the predictions after --split', async () => {
    const polls = [...otherNetworkPolls({ shipments: 1200, days: 40, seed: 43, calendar, startMs: START })];
    const writer = new ClickHouseWriter(db.client, { maxBatchRows: 50_000 });
    for (const poll of polls) {
      const outcome = processPollMessage(JSON.stringify(poll), product.rules, (name) => product.registry.resolve(name));
      if (outcome.kind === 'rows') writer.write(outcome.rows);
    }
    await writer.close();
    vi.stubEnv('CLICKHOUSE_URL', `${TEST_CLICKHOUSE_URL}/${db.target.database}`);
    const split = START + 30 * DAY_MS;
    let out = '';
    let err = '';
    const io = { env: {}, stdout: (t: string) => { out += t; }, stderr: (t: string) => { err += t; } } as unknown as CliIo;
    const code = await runPredict(['backtest', '--from-clickhouse', '--split', new Date(split).toISOString(), '--since', new Date(START - DAY_MS).toISOString(), '--json'], io);
    expect(code, err).toBe(0);
    const summary = JSON.parse(out) as BacktestSummary;
    expect(summary.polls_at_or_after_split).toBe(polls.filter((p) => Date.parse(p.polled_at) >= split).length);
    expect(summary.polls_before_split).toBe(polls.length - summary.polls_at_or_after_split);
    expect(summary.overall.predictions).toBeGreaterThan(400);
    expect(summary.overall.p80_coverage!).toBeGreaterThanOrEqual(0.72);
  }, 180_000);
});

describe('backtest on the sandbox’s own network (the first generator)', () => {
  it('holds p80/p90 coverage at modest size', async () => {
    const directory = loadPlaces();
    const endMs = Date.parse('2026-06-01T00:00:00+05:30');
    const journeys: CarrierPoll[] = [];
    for await (const { polls } of historyPolls({ shipments: 8000, days: 90, seed: 5, endMs, config: loadNetworkConfig(), calendar, places: { placeOf: (pin) => directory.placeOf(pin), all: () => directory.all(), zoneOf: (o, d) => directory.zoneOf(o, d) } })) journeys.push(...polls);
    const { summary } = await backtest(() => journeys, { splitMs: endMs - 15 * DAY_MS, rules: product.rules, places: placeLookupOf(directory), workdays: new WorkdayIndex(calendar), windowDays: 90 });
    const o = summary.overall;
    expect(o.predictions).toBeGreaterThan(1500);
    expect(o.p80_coverage!).toBeGreaterThanOrEqual(0.75);
    expect(o.p80_coverage!).toBeLessThanOrEqual(0.93);
    expect(o.p90_coverage!).toBeGreaterThanOrEqual(0.85);
    expect(o.p90_coverage!).toBeLessThanOrEqual(0.98);
    expect(o.exact_day_rate!).toBeGreaterThan(o.carrier_edd.exact_day_rate!);
    expect(summary.in_transit_predicted_share!).toBeGreaterThan(0.95);
    // In every stage with enough predictions to judge (bands for a modest history, not the bench's targets).
    // (8,000 journeys: in transit has thousands; the other stages a few hundred at most, judged when 140 or more.)
    const stages = Object.entries(summary.by_stage).filter(([, x]) => x.predictions >= 140);
    expect(stages.map(([stage]) => stage)).toEqual(expect.arrayContaining(['in_transit']));
    for (const [stage, x] of stages) {
      expect(x.p80_coverage!, stage).toBeGreaterThanOrEqual(0.72);
      expect(x.p80_coverage!, stage).toBeLessThanOrEqual(0.97);
      expect(x.p90_coverage!, stage).toBeGreaterThanOrEqual(0.82);
      expect(x.p90_coverage!, stage).toBeLessThanOrEqual(0.99);
    }
  }, 180_000);
});
