/**
 * The pipeline's acceptance against the real services (npm run services -- up): the API in
 * distributed mode (Redis keys and cache, Kafka raw-poll log, ClickHouse lane benchmarks), a
 * normalizer consuming the topic into ClickHouse, and the sandbox carrier network, all in process.
 *
 * Isolation: a ClickHouse database of this file's own (the API's lane benchmarks and the
 * normalizer's writes), consumer groups of its own whose offsets start at the topic's end as it was
 * when the file started (so only polls published from then on are normalized into that database),
 * a Redis namespace of its own (the harness) and AWBs no other run uses.
 */
import { spawn } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNormalizer, type NormalizerApp } from '../apps/normalizer/start.ts';
import { expectRecord, startApiHarness, type ApiHarness } from '../apps/api/testutil/harness.ts';
import { readLaneBenchmark, sqlStringList } from '../lib/clickhouse/index.ts';
import { TEST_CLICKHOUSE_URL, createTestDatabase, rowsOf, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { POLLS_TOPIC, ensureTopics } from '../lib/kafka/topics.ts';
import { deliveredTransitDays } from '../lib/sandbox/scenario.ts';
import type { CarrierPoll, TrackingRecord } from '../lib/schemas/index.ts';
import type { KeyMode } from '../lib/schemas/index.ts';
import { retried } from './support/retried.ts';

const NODE = process.execPath; // node runs the TypeScript itself
const REPLAY = join(import.meta.dirname, '../apps/cli/replay.ts');

/** What the sandbox's scenario 16 puts in remarks (lib/sandbox/scenario.ts PERSONAL_DATA_REMARKS). */
const PERSONAL_DATA = ['9876543210', '98765', '43210', '482913', 'Priya', 'Sharma', 'Ravi', 'Kumar', 'priya.sharma', 'example.com'];

// ---------------------------------------------------------------------------------------------
// Unique sandbox numbers: a random run prefix, a sequence number, then lane LL and scenario SS
// (sandbox.md: the last four digits choose them).
// ---------------------------------------------------------------------------------------------
const RUN = String(randomInt(0, 1_000_000)).padStart(6, '0');
const sequences = new Map<string, number>();
type SandboxCarrier = 'delhivery' | 'bluedart' | 'dtdc' | 'shadowfax';
function uniqueAwb(carrier: SandboxCarrier, scenario: number, lane: number): string {
  const next = sequences.get(carrier) ?? 0;
  sequences.set(carrier, next + 1);
  if (next >= 100) throw new Error('uniqueAwb: at most 100 numbers per carrier and file');
  const n = String(next).padStart(2, '0');
  const tail = `${String(lane).padStart(2, '0')}${String(scenario).padStart(2, '0')}`;
  switch (carrier) {
    case 'delhivery': return `${RUN}${n}00${tail}`; // 14 digits
    case 'bluedart': return `${RUN.slice(1)}${n}${tail}`; // 11 digits
    case 'dtdc': return `V${RUN.slice(2)}${n}${tail}`; // V + 10 digits
    case 'shadowfax': return `SF${RUN}${n}${tail}`; // SF + 12 digits
  }
}

// ---------------------------------------------------------------------------------------------
// Shared state of the file: one normalizer, one API, one key, every poll the API published.
// ---------------------------------------------------------------------------------------------
let db: TestDatabase;
let normalizer: NormalizerApp;
let api: ApiHarness;
let kafka: Kafka;
let key: string;
const groupId = `test-pipeline-${randomUUID()}`;
/** Topic end offsets when the file started: this file's consumer groups start there. */
let startOffsets: { partition: number; offset: string }[] = [];
const startedAtMs = Date.now();
/** Every poll the API handed to its bus (a tap in front of KafkaBus.publish, which still runs). */
const published: { poll: CarrierPoll; mode: KeyMode }[] = [];
/** How many times the normalizer was handed each poll (a tap in front of handleBatch, which still runs). */
const handled = new Map<string, number>();

function pipelineEnv() {
  return loadEnv({ KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'error' });
}

/** Sets a fresh consumer group's offsets (before any member joins), so it starts there. */
async function setGroupOffsets(group: string, offsets: { partition: number; offset: string }[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await retried(() => admin.setOffsets({ groupId: group, topic: POLLS_TOPIC, partitions: offsets }));
  } finally {
    await admin.disconnect();
  }
}

async function topicEnds(): Promise<{ partition: number; offset: string }[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await retried(() => ensureTopics(admin));
    return (await retried(() => admin.fetchTopicOffsets(POLLS_TOPIC))).map((p) => ({ partition: p.partition, offset: p.high }));
  } finally {
    await admin.disconnect();
  }
}

/** Polls `probe` until `done` holds or the deadline passes; returns the last value (assert on it). */
async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

const list = sqlStringList;

async function track(carrier: string, awb: string): Promise<TrackingRecord> {
  return expectRecord(await api.track(key, carrier, awb));
}

function pollIdOf(value: Buffer | null): string | null {
  try {
    const id = (JSON.parse(value?.toString('utf8') ?? '') as { poll_id?: unknown }).poll_id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

function pollsOf(awbs: readonly string[]): CarrierPoll[] {
  const wanted = new Set(awbs);
  return published.filter((p) => wanted.has(p.poll.awb)).map((p) => p.poll);
}

beforeAll(async () => {
  kafka = testKafka();
  db = await createTestDatabase();
  startOffsets = await topicEnds();
  await setGroupOffsets(groupId, startOffsets);
  // The cron never fires during the file: the tests refresh lane benchmarks themselves.
  normalizer = await startNormalizer(pipelineEnv(), { database: db.target.database, groupId, healthPort: null, laneRefreshCron: '0 0 1 1 *' });
  const consumer = normalizer.consumer;
  const handleBatch = consumer.flow.handleBatch.bind(consumer.flow);
  consumer.flow.handleBatch = (messages) => {
    for (const message of messages) {
      const id = pollIdOf(message.value);
      if (id) handled.set(id, (handled.get(id) ?? 0) + 1);
    }
    return handleBatch(messages);
  };
  api = await startApiHarness({
    store: 'redis',
    env: { KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, LANE_CACHE_TTL_MS: '0' },
    clickhouseDatabase: db.target.database,
  });
  const bus = api.runtime.bus;
  const publish = bus.publish.bind(bus);
  bus.publish = (poll, mode) => {
    published.push({ poll, mode });
    publish(poll, mode);
  };
  // Limits high enough for the whole file on the harness's frozen clock.
  key = (await api.createKey({ plan: 'business', mode: 'test', burst_per_second: 10_000, daily_quota: 10_000 })).key;
}, 120_000);

afterAll(async () => {
  await api?.close();
  await normalizer?.stop();
  await db?.drop();
});

describe('pipeline: API (distributed) → Kafka → normalizer → ClickHouse', () => {
  const lookedUp: { carrier: SandboxCarrier; awb: string; record: TrackingRecord | null }[] = [];

  it('stores every lookup as carrier_polls, events and shipments rows, with no personal data', async () => {
    const cases: { carrier: SandboxCarrier; scenario: number }[] = [
      { carrier: 'delhivery', scenario: 16 }, { carrier: 'bluedart', scenario: 16 }, { carrier: 'dtdc', scenario: 16 },
      { carrier: 'shadowfax', scenario: 16 }, { carrier: 'delhivery', scenario: 2 }, { carrier: 'delhivery', scenario: 5 },
    ];
    for (const { carrier, scenario } of cases) {
      const awb = uniqueAwb(carrier, scenario, 2);
      const record = await track(carrier, awb);
      expect(record.carrier).toBe(carrier);
      lookedUp.push({ carrier, awb, record });
    }
    // A number the carrier does not know is polled (and logged) too, but has no events or shipment.
    const unknown = uniqueAwb('delhivery', 0, 2);
    const res = await api.track(key, 'delhivery', unknown);
    expect(res.statusCode, res.body).toBe(404);
    lookedUp.push({ carrier: 'delhivery', awb: unknown, record: null });
    await api.runtime.bus.flush();

    const awbs = lookedUp.map((l) => l.awb);
    const polls = pollsOf(awbs);
    expect(polls).toHaveLength(lookedUp.length);
    expect(published.filter((p) => awbs.includes(p.poll.awb)).every((p) => p.mode === 'test')).toBe(true);

    const found = lookedUp.filter((l) => l.record !== null);
    const expectedEvents = found.reduce((n, l) => n + l.record!.events.length, 0);
    type PollRow = { poll_id: string; carrier: string; awb: string; outcome: string; mode: string; source: string };
    const pollRows = await eventually(
      () => rowsOf<PollRow>(db.client, `SELECT poll_id, carrier, awb, outcome, mode, source FROM carrier_polls WHERE awb IN ${list(awbs)}`),
      (rows) => rows.length >= lookedUp.length,
    );
    const eventRows = await eventually(
      () => rowsOf<{ event_id: string; carrier: string; awb: string; status: string; code: string; poll_id: string }>(db.client,
        `SELECT event_id, carrier, awb, status, code, poll_id FROM events WHERE awb IN ${list(awbs)}`),
      (rows) => rows.length >= expectedEvents,
    );
    type ShipmentRow = { carrier: string; awb: string; mode: string; status: string; stage: string; lane: string | null; poll_id: string };
    const shipmentRows = await eventually(
      () => rowsOf<ShipmentRow>(db.client, `SELECT carrier, awb, mode, status, stage, lane, poll_id FROM shipments WHERE awb IN ${list(awbs)}`),
      (rows) => rows.length >= found.length,
    );

    // carrier_polls: exactly one row per poll the API made, as it made it.
    expect(pollRows.map((r) => r.poll_id).sort()).toEqual(polls.map((p) => p.poll_id).sort());
    for (const poll of polls) {
      expect(pollRows.find((r) => r.poll_id === poll.poll_id)).toEqual({
        poll_id: poll.poll_id, carrier: poll.carrier, awb: poll.awb, outcome: poll.outcome, mode: 'test', source: 'lookup',
      });
    }
    expect(pollRows.find((r) => r.awb === unknown)?.outcome).toBe('not_found');

    // events: exactly the events the API answered with, same ids and statuses, written by that poll.
    expect(eventRows).toHaveLength(expectedEvents);
    for (const { carrier, awb, record } of found) {
      const pollId = polls.find((p) => p.awb === awb)!.poll_id;
      const stored = eventRows.filter((r) => r.awb === awb).sort((a, b) => a.event_id.localeCompare(b.event_id));
      const answered = [...record!.events].sort((a, b) => a.event_id.localeCompare(b.event_id));
      expect(stored.map(({ event_id, status, code }) => ({ event_id, status, code })), `${carrier} ${awb}`)
        .toEqual(answered.map(({ event_id, status, code }) => ({ event_id, status, code })));
      expect(stored.every((r) => r.carrier === carrier && r.poll_id === pollId)).toBe(true);
    }

    // shipments: one row per found shipment, with the status the API answered.
    expect(shipmentRows).toHaveLength(found.length);
    for (const { carrier, awb, record } of found) {
      expect(shipmentRows.find((r) => r.awb === awb), `${carrier} ${awb}`).toMatchObject({
        carrier, mode: 'test', status: record!.status, lane: `${carrier}:600:500`,
      });
    }
    const statuses = Object.fromEntries(shipmentRows.map((r) => [`${r.carrier}/${r.awb.slice(-2)}`, r.stage]));
    expect(statuses).toMatchObject({ 'delhivery/16': 'delivered', 'bluedart/16': 'delivered', 'delhivery/02': 'in_transit', 'delhivery/05': 'delivery_attempted' });

    // Scenario 16's names, phone numbers, OTP and e-mail reach no table (nor the raw-poll log).
    const everything = JSON.stringify(await Promise.all(['carrier_polls', 'events', 'shipments'].map((table) =>
      rowsOf<unknown>(db.client, `SELECT * FROM ${table} WHERE awb IN ${list(awbs)}`))));
    expect(everything).toContain(awbs[0]);
    for (const secret of PERSONAL_DATA) expect(everything, secret).not.toContain(secret);
    const logged = JSON.stringify(polls);
    for (const secret of PERSONAL_DATA) expect(logged, secret).not.toContain(secret);
  }, 120_000);

  const LANE = 7; // Kolkata 700001 → Guwahati 781001
  const laneKey = 'test:shadowfax:700:781';
  const delivered: string[] = [];

  it('gives the 31st lookup of a lane a benchmark once 30 delivered shipments are refreshed into lane_benchmarks', async () => {
    for (let i = 0; i < 30; i++) {
      const awb = uniqueAwb('shadowfax', i % 2 === 0 ? 4 : 10, LANE);
      const record = await track('shadowfax', awb);
      expect(record.status).toBe('delivered');
      // Under 30 delivered shipments the lane has no benchmark yet.
      expect(record.insights.benchmark).toEqual({ median_transit_days_for_route: null, sample_size: null, expected_delivery_by: null });
      delivered.push(awb);
    }
    await api.runtime.bus.flush();

    type LaneRow = { awb: string; stage: string; lane: string | null; transit_days: number | null };
    const rows = await eventually(
      () => rowsOf<LaneRow>(db.client, `SELECT awb, stage, lane, transit_days FROM shipments WHERE carrier = 'shadowfax' AND awb IN ${list(delivered)}`),
      (r) => r.length >= 30,
    );
    expect(rows).toHaveLength(30);
    for (const row of rows) {
      expect(row).toMatchObject({ stage: 'delivered', lane: 'shadowfax:700:781' });
      expect(row.transit_days).toBeCloseTo(deliveredTransitDays(row.awb), 9);
    }

    // Closures are written after the rows they come from (LaneClosureSink): the refresh needs them in.
    await eventually(
      () => rowsOf<{ awb: string }>(db.client, `SELECT awb FROM lane_closures WHERE carrier = 'shadowfax' AND awb IN ${list(delivered)}`),
      (r) => new Set(r.map((x) => x.awb)).size >= 30,
    );
    await normalizer.refreshLanes();
    const stored = await readLaneBenchmark(db.client, laneKey);
    expect(stored?.sample_size).toBeGreaterThanOrEqual(30);

    // Every delivered sandbox shipment of the lane in this database (others may share the lane while
    // this file runs): the expected benchmark from the sandbox's own transit times.
    const lane = await rowsOf<{ awb: string }>(db.client,
      `SELECT awb FROM shipments FINAL WHERE mode = 'test' AND lane = 'shadowfax:700:781' AND stage = 'delivered'`);
    const days = lane.map((r) => deliveredTransitDays(r.awb)).sort((a, b) => a - b);
    const median = days.length % 2 ? days[(days.length - 1) / 2]! : (days[days.length / 2 - 1]! + days[days.length / 2]!) / 2;
    expect(stored).toEqual({ median_transit_days: expect.closeTo(median, 9), sample_size: days.length });

    // The 31st: an in-transit number of the same lane, and a further delivered one.
    for (const scenario of [2, 4]) {
      const awb = uniqueAwb('shadowfax', scenario, LANE);
      const record = await eventually(() => track('shadowfax', awb), (r) => r.insights.benchmark.sample_size !== null, 30_000);
      expect(record.insights.benchmark.sample_size).toBeGreaterThanOrEqual(30);
      expect(record.insights.benchmark.sample_size).toBe(days.length);
      expect(record.insights.benchmark.median_transit_days_for_route).toBe(Math.round(median * 10) / 10);
      expect(record.insights.benchmark.expected_delivery_by).not.toBeNull();
      if (scenario === 4) delivered.push(awb);
    }
  }, 180_000);

  it('creates no duplicate rows when polls are re-delivered (a batch handled twice, a second group re-reading the log)', async () => {
    await api.runtime.bus.flush();
    const mine = [...new Set(published.map((p) => p.poll.awb))];
    expect(mine.length).toBeGreaterThanOrEqual(38);
    const counts = async () => (await rowsOf<{ t: string; c: string; u: string }>(db.client, `
      SELECT 'carrier_polls' AS t, count() AS c, uniqExact(poll_id) AS u FROM carrier_polls WHERE awb IN ${list(mine)}
      UNION ALL SELECT 'events' AS t, count() AS c, uniqExact(event_id) AS u FROM events WHERE awb IN ${list(mine)}
      UNION ALL SELECT 'shipments' AS t, count() AS c, uniqExact(poll_id) AS u FROM shipments WHERE awb IN ${list(mine)}`))
      .reduce<Record<string, { count: number; distinct: number }>>((acc, r) => ({ ...acc, [r.t]: { count: Number(r.c), distinct: Number(r.u) } }), {});

    // In normal operation the consumer is handed each poll once: its fetch position moves on after
    // a batch is written and committed (it used to fetch the same messages again and again).
    const ids = published.map((p) => p.poll.poll_id);
    await eventually(async () => ids.every((id) => handled.has(id)), (all) => all);
    expect(ids.filter((id) => handled.get(id) !== 1).map((id) => `${id} handled ${handled.get(id) ?? 0} times`)).toEqual([]);

    // Wait until every published poll is stored: a flush writes carrier_polls, then events, then
    // shipments, so once every found shipment's row is there its events are too.
    const found = published.filter((p) => p.poll.outcome === 'ok').length;
    const before = await eventually(counts, (c) => c.carrier_polls?.count === published.length && c.shipments?.count === found);
    expect(before.shipments).toEqual({ count: found, distinct: found });
    expect(before.carrier_polls).toEqual({ count: published.length, distinct: published.length });
    expect(before.events!.count).toBe(before.events!.distinct);
    expect(before.shipments!.count).toBe(before.shipments!.distinct);

    // 1. The consumer crashed after its write and before its offset commit: Kafka hands it the same
    //    messages again (byte for byte what KafkaBus sent).
    const messages = published.map(({ poll, mode }, i) => ({
      key: Buffer.from(`${poll.carrier}:${poll.awb}`), value: Buffer.from(JSON.stringify(poll)), offset: String(i), headers: { mode: Buffer.from(mode) },
    }));
    expect(await normalizer.consumer.flow.handleBatch(messages)).toEqual({ written: published.length, dlq: 0 });
    expect(await normalizer.consumer.flow.handleBatch(messages)).toEqual({ written: published.length, dlq: 0 });
    expect(await counts()).toEqual(before);

    // 2. A second consumer group re-reads this file's whole window of the log into the same database.
    const ends = await topicEnds();
    const again = `${groupId}-again`;
    await setGroupOffsets(again, startOffsets);
    const second = await startNormalizer(pipelineEnv(), { database: db.target.database, groupId: again, healthPort: null, laneRefreshCron: '0 0 1 1 *' });
    try {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const committed = await eventually(
          async () => (await admin.fetchOffsets({ groupId: again, topics: [POLLS_TOPIC] }))[0]!.partitions,
          (parts) => ends.every((e) => BigInt(parts.find((p) => p.partition === e.partition)?.offset ?? '-1') >= BigInt(e.offset)),
          90_000,
        );
        for (const end of ends) expect(BigInt(committed.find((p) => p.partition === end.partition)!.offset)).toBeGreaterThanOrEqual(BigInt(end.offset));
      } finally {
        await admin.disconnect();
      }
    } finally {
      await second.stop();
    }
    expect(await counts()).toEqual(before);
  }, 180_000);

  it('replay --diff reports, per carrier and status, what a mapping change would do to the stored events', async () => {
    // More delhivery deliveries: each has one "Dispatched / Out for delivery" scan.
    const extra: string[] = [];
    for (let i = 0; i < 5; i++) {
      const awb = uniqueAwb('delhivery', 4, 3);
      expect((await track('delhivery', awb)).status).toBe('delivered');
      extra.push(awb);
    }
    await api.runtime.bus.flush();
    const polls = published.map((p) => p.poll);
    await eventually(
      () => rowsOf<{ c: string }>(db.client, `SELECT count() AS c FROM shipments WHERE awb IN ${list(extra)}`),
      (r) => Number(r[0]?.c) === extra.length,
    );

    const dir = mkdtempSync(join(tmpdir(), 'pipeline-replay-'));
    try {
      const input = join(dir, 'polls.ndjson');
      writeFileSync(input, polls.map((p) => JSON.stringify(p)).join('\n') + '\n');
      // A copy of the config where Delhivery's "Dispatched" + out-for-delivery instruction is read as a dispatch.
      const configDir = join(dir, 'config');
      cpSync(DEFAULT_CONFIG_DIR, configDir, { recursive: true });
      const mappingFile = join(configDir, 'mappings', 'delhivery.yaml');
      const original = readFileSync(mappingFile, 'utf8');
      const changed = original.replace(
        "  - when: { text: ['^dispatched'], remarks: [outfordelivery] }\n    status: out_for_delivery\n    code: out_for_delivery\n",
        "  - when: { text: ['^dispatched'], remarks: [outfordelivery] }\n    status: in_transit\n    code: dispatched\n",
      );
      expect(changed).not.toBe(original);
      writeFileSync(mappingFile, changed);

      // The expected change, counted on the raw polls: Delhivery scans "Dispatched" with an out-for-delivery instruction.
      const ofd = polls.filter((p) => p.carrier === 'delhivery')
        .flatMap((p) => p.scans)
        .filter((s) => /^dispatched/i.test(s.raw_status) && /out\s*for\s*delivery/i.test(s.remarks ?? '')).length;
      expect(ofd).toBeGreaterThanOrEqual(extra.length);

      const env = { CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CLICKHOUSE_DATABASE: db.target.database, CONFIG_DIR: configDir };
      const diff = await run([REPLAY, '--input', input, '--diff'], env);
      expect(diff.code, diff.stderr).toBe(0);
      const report = JSON.parse(diff.stdout.trim()) as { mapping_version: string; compared: number; changed: number; added: number; missing: number; rows: unknown[] };
      expect(report.rows).toEqual([{ carrier: 'delhivery', from: 'out_for_delivery/out_for_delivery', to: 'in_transit/dispatched', count: ofd }]);
      expect(report).toMatchObject({ changed: ofd, added: 0, missing: 0 });
      expect(report.compared).toBe(Number((await rowsOf<{ c: string }>(db.client,
        `SELECT uniqExact(event_id) AS c FROM events WHERE awb IN ${list(polls.map((p) => p.awb))}`))[0]!.c));
      expect(diff.stderr).toMatch(/delhivery\s+out_for_delivery\/out_for_delivery\s+→ in_transit\/dispatched\s+\d+/);

      // The same polls under today's config: nothing would change.
      const same = await run([REPLAY, '--input', input, '--diff'], { ...env, CONFIG_DIR: DEFAULT_CONFIG_DIR });
      expect(same.code, same.stderr).toBe(0);
      expect(JSON.parse(same.stdout.trim())).toMatchObject({ changed: 0, added: 0, missing: 0, rows: [] });

      // --from-kafka --since: the window of this file holds every poll the API published.
      const out = join(dir, 'from-kafka.ndjson');
      const fromKafka = await run([REPLAY, '--from-kafka', '--since', new Date(startedAtMs).toISOString(), '--output', out], { KAFKA_BROKERS: TEST_BROKERS });
      expect(fromKafka.code, fromKafka.stderr).toBe(0);
      const replayed = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { poll_id: string; carrier?: string; awb?: string; error?: { code: string } });
      const byId = new Map(replayed.map((r) => [r.poll_id, r]));
      for (const poll of polls) {
        const expected = poll.outcome === 'not_found' ? { error: { code: 'shipment_not_found' } } : { carrier: poll.carrier, awb: poll.awb };
        expect(byId.get(poll.poll_id), poll.poll_id).toMatchObject(expected);
      }
      expect(polls.some((p) => p.outcome === 'not_found')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
