/**
 * Replay against every store, with the real ClickHouse and Kafka (lib/replay/README.md): the same
 * polls written as the pipeline writes them — ClickHouse through the normalizer's writer, Kafka as
 * the API publishes them, and the embedded default's log — then replayed with one mapping rule
 * changed (a copy of config/).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouseWriter, type ClickHouseClient } from '../clickhouse/index.ts';
import { readCheckpoint } from '../clickhouse/replay-apply.ts';
import { createTestDatabase, rowsOf, countOf, TEST_CLICKHOUSE_URL, type TestDatabase } from '../clickhouse/testutil/database.ts';
import { pollKey } from '../kafka/topics.ts';
import { TEST_BROKERS, testKafka } from '../kafka/testutil/broker.ts';
import { processPollMessage } from '../pipeline/process-poll.ts';
import { loadProduct } from '../product/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { PollLog } from '../store/poll-log.ts';
import { journeyPoll } from '../testutil/polls.ts';
import { applyClickHouse, applyRunId, diffClickHouse } from './clickhouse-run.ts';
import type { KeyMode } from '../schemas/index.ts';

const NODE = process.execPath; // node runs the TypeScript itself
const CLI = join(import.meta.dirname, '../../apps/cli/replay.ts');
const START = Date.UTC(2026, 9, 5, 4, 30);
const product = loadProduct();
const resolveCarrier = (n: string) => product.registry.resolve(n);

/** 40 shipments each of dtdc (the changed rule), ekart and delhivery; two polls each: part way and delivered. */
function makePolls(): { poll: CarrierPoll; mode: KeyMode }[] {
  const polls: { poll: CarrierPoll; mode: KeyMode }[] = [];
  for (let i = 0; i < 120; i++) {
    const carrier = ['dtdc', 'ekart', 'delhivery'][i % 3]!;
    const full = journeyPoll(carrier, i, START + (i % 7) * 86_400_000);
    const cut = new Date(Date.parse(full.polled_at) - 30 * 3_600_000 + 5.5 * 3_600_000).toISOString().slice(0, 19);
    const partial: CarrierPoll = { ...full, poll_id: randomUUID(), polled_at: new Date(Date.parse(full.polled_at) - 30 * 3_600_000).toISOString(), scans: full.scans.filter((s) => s.occurred_at <= cut) };
    const mode = i % 4 === 0 ? 'test' : 'live';
    polls.push({ poll: partial, mode }, { poll: full, mode });
  }
  return polls;
}

/** A copy of config/ where DTDC's out-for-delivery code maps to in_transit/received. */
function changedConfig(dir: string): string {
  cpSync(join(import.meta.dirname, '../../config'), dir, { recursive: true });
  const path = join(dir, 'mappings/dtdc.yaml');
  const text = readFileSync(path, 'utf8');
  const changed = text.replace('- when: { raw_code: [OUTDLV] }\n    status: out_for_delivery\n    code: out_for_delivery', '- when: { raw_code: [OUTDLV] }\n    status: in_transit\n    code: received');
  if (changed === text) throw new Error('the DTDC rule to change was not found');
  writeFileSync(path, changed);
  return dir;
}

/** Stores polls as the normalizer does: processPollMessage with today's rules, the batched writer. */
async function storeInClickHouse(client: ClickHouseClient, polls: { poll: CarrierPoll; mode: KeyMode }[]): Promise<void> {
  const writer = new ClickHouseWriter(client, { flushIntervalMs: 60_000 });
  for (const { poll, mode } of polls) {
    const step = processPollMessage(JSON.stringify(poll), product.rules, resolveCarrier, mode);
    if (step.kind !== 'rows') throw new Error(step.reason);
    writer.write(step.rows);
  }
  await writer.close();
}

interface CliRun { status: number | null; stdout: string; stderr: string }

function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [CLI, ...args], { env: { ...process.env, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, KAFKA_BROKERS: TEST_BROKERS, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end();
  });
}

function diffOf(run: CliRun) {
  expect(run.stderr).not.toMatch(/line \d+:/);
  expect(run.status, run.stderr).toBe(0);
  const { compared, unchanged, changed, added, missing, rows, polls } = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
  return { compared, unchanged, changed, added, missing, rows, polls };
}

/** Everything analysts read, without the ingest stamps: what two apply runs must agree on. */
async function snapshot(client: ClickHouseClient) {
  return {
    events: await rowsOf(client, `SELECT event_id, carrier, awb, occurred_at, status, code, reason_code, raw_status, mapping_version, poll_id FROM events FINAL ORDER BY event_id`),
    shipments: await rowsOf(client, `SELECT carrier, awb, mode, status, stage, attempts, delivered_at, transit_days, version, poll_id, mapping_version FROM shipments FINAL ORDER BY carrier, awb, mode`),
    polls: await rowsOf(client, `SELECT poll_id, mapping_version, scans_json FROM carrier_polls FINAL ORDER BY poll_id`),
    plainCounts: await rowsOf(client, `SELECT (SELECT count() FROM events) AS e, (SELECT count() FROM shipments) AS s, (SELECT count() FROM carrier_polls) AS p`),
  };
}

describe('replay everywhere (ClickHouse, Kafka, the embedded log)', () => {
  const polls = makePolls();
  let tmp: string;
  let dataDir: string;
  let config: string;
  let db: TestDatabase;
  let resumedDb: TestDatabase;
  const topic = `test.replay-${randomUUID().slice(0, 8)}`;
  let kafkaSince: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'replay-everywhere-'));
    dataDir = join(tmp, 'data');
    config = changedConfig(join(tmp, 'config'));
    const log = new PollLog(dataDir);
    for (const p of polls) log.append(p);
    await log.flush();

    [db, resumedDb] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    await Promise.all([storeInClickHouse(db.client, polls), storeInClickHouse(resumedDb.client, polls)]);

    const kafka = testKafka();
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
    await admin.disconnect();
    kafkaSince = new Date(Date.now() - 60_000).toISOString();
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({ topic, messages: polls.map(({ poll, mode }) => ({ key: pollKey(poll.carrier, poll.awb), value: JSON.stringify(poll), headers: { mode } })) });
    await producer.disconnect();
  });

  afterAll(async () => {
    await Promise.all([db?.drop(), resumedDb?.drop()]);
    const admin = testKafka().admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    await admin.disconnect();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('replays the embedded log as it is, and finds nothing to change with the rules unchanged', async () => {
    const records = await cli(['--input', join(dataDir, 'polls.ndjson'), '--output', '-']);
    expect(records.status, records.stderr).toBe(0);
    expect(records.stderr).toMatch(/240 polls, 240 records, 0 not found, 0 carrier errors, 0 invalid lines/);
    expect(records.stdout.trim().split('\n').map((l) => JSON.parse(l).poll_id)).toEqual(polls.map((p) => p.poll.poll_id));

    const diff = diffOf(await cli(['--from-embedded', '--diff', '--data-dir', dataDir]));
    expect(diff).toMatchObject({ polls: 240, changed: 0, added: 0, missing: 0, rows: [] });
    expect(diff.compared).toBeGreaterThan(1000);
  });

  it('--from-clickhouse streams the stored polls back as records, in polled_at order', async () => {
    const run = await cli(['--from-clickhouse', '--since', new Date(START - 86_400_000).toISOString(), '--carrier', 'dtdc', '--database', db.target.database, '--quiet']);
    expect(run.status, run.stderr).toBe(0);
    const records = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { poll_id: string; carrier: string; last_polled_at: string });
    const dtdc = polls.filter((p) => p.poll.carrier === 'dtdc').map((p) => p.poll).sort((a, b) => a.polled_at.localeCompare(b.polled_at) || a.poll_id.localeCompare(b.poll_id));
    expect(records.map((r) => r.poll_id)).toEqual(dtdc.map((p) => p.poll_id));
    expect(records.map((r) => r.last_polled_at)).toEqual(dtdc.map((p) => p.polled_at));
  });

  it('with one rule changed, the embedded log, Kafka and ClickHouse report the same changes on the same polls', async () => {
    const [embedded, kafka, clickhouse] = await Promise.all([
      cli(['--from-embedded', '--diff', '--data-dir', dataDir, '--config', config]),
      cli(['--from-kafka', '--topic', topic, '--since', kafkaSince, '--diff', '--config', config, '--database', db.target.database]),
      cli(['--from-clickhouse', '--since', new Date(START - 86_400_000).toISOString(), '--diff', '--config', config, '--database', db.target.database, '--quiet']),
    ]);
    const fromEmbedded = diffOf(embedded);
    expect(fromEmbedded.polls).toBe(240);
    expect(fromEmbedded.changed).toBeGreaterThan(0);
    expect(fromEmbedded.rows).toEqual([{ carrier: 'dtdc', from: 'out_for_delivery/out_for_delivery', to: 'in_transit/received', count: fromEmbedded.changed }]);
    expect(diffOf(kafka)).toEqual(fromEmbedded);
    expect(diffOf(clickhouse)).toEqual(fromEmbedded);
    expect(clickhouse.stderr).toMatch(/rows not yet under mapping \w+: 240 polls, \d+ events, 120 shipments/);
  }, 60_000);

  it('--apply makes ClickHouse show the new mapping with no duplicate rows, and a second apply writes nothing', async () => {
    const since = new Date(START - 86_400_000).toISOString();
    const refused = await cli(['--from-clickhouse', '--since', since, '--apply', '--config', config, '--database', db.target.database]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/standard input is not a terminal: add --yes/);

    const applied = await cli(['--from-clickhouse', '--since', since, '--apply', '--yes', '--quiet', '--config', config, '--database', db.target.database]);
    expect(applied.status, applied.stderr).toBe(0);
    expect(applied.stderr).toMatch(/wrote 240 polls, \d+ events, 120 shipments rows; merged \d+ partitions/);
    const version = loadProduct(config).rules.mappingVersion;
    const c = db.client;
    // Plain queries: one row per key (the replaced rows are merged away).
    expect(await countOf(c, 'SELECT count() AS c FROM events')).toBe(await countOf(c, 'SELECT uniqExact(event_id) AS c FROM events'));
    expect(await countOf(c, 'SELECT count() AS c FROM shipments')).toBe(120);
    expect(await countOf(c, 'SELECT count() AS c FROM carrier_polls')).toBe(240);
    expect(await countOf(c, `SELECT count() AS c FROM events WHERE mapping_version != '${version}'`)).toBe(0);
    // The changed rule, as analysts read it (plain, FINAL, argMax).
    expect(await countOf(c, `SELECT count() AS c FROM events WHERE carrier = 'dtdc' AND raw_code = 'OUTDLV' AND (status, code) != ('in_transit', 'received')`)).toBe(0);
    expect(await countOf(c, `SELECT count() AS c FROM events FINAL WHERE carrier = 'dtdc' AND raw_code = 'OUTDLV' AND status = 'in_transit'`)).toBeGreaterThan(0);
    const latest = await rowsOf<{ v: string }>(c, 'SELECT DISTINCT tupleElement(argMax(tuple(mapping_version), version), 1) AS v FROM shipments GROUP BY carrier, awb, mode');
    expect(latest).toEqual([{ v: version }]);

    const again = await cli(['--from-clickhouse', '--since', since, '--apply', '--yes', '--quiet', '--config', config, '--database', db.target.database]);
    expect(again.status, again.stderr).toBe(0);
    expect(diffOf(again)).toMatchObject({ changed: 0, added: 0 });
    expect(again.stderr).toMatch(/rows not yet under mapping \w+: 0 polls, 0 events, 0 shipments/);
    expect(again.stderr).toMatch(/wrote 0 polls, 0 events, 0 shipments rows\n/);
    expect(await countOf(c, 'SELECT count() AS c FROM events')).toBe(await countOf(c, 'SELECT uniqExact(event_id) AS c FROM events'));
  }, 90_000);

  it('an interrupted apply, run again, ends where an uninterrupted one does', async () => {
    const rules = loadProduct(config).rules;
    const window = { since: START - 86_400_000 };
    const controller = new AbortController();
    // Cut the run inside its third page, after the events insert and before the shipments one.
    const cut = applyClickHouse(resumedDb.client, {
      window, rules, pollsPerPage: 30, signal: controller.signal,
      onInsert: (table, page) => { if (page === 3 && table === 'events') controller.abort(new Error('interrupted')); },
    });
    await expect(cut).rejects.toThrow('interrupted');
    const checkpoint = await readCheckpoint(resumedDb.client, applyRunId(rules.mappingVersion, window));
    expect(checkpoint).toMatchObject({ state: 'writing', pages: 2 });

    const resumed = await applyClickHouse(resumedDb.client, { window, rules, pollsPerPage: 30 });
    expect(resumed.resumedFrom).toMatchObject({ pages: 2 });
    expect(resumed.polls).toBe(240 - checkpoint!.polls);
    expect(await readCheckpoint(resumedDb.client, resumed.runId)).toMatchObject({ state: 'done' });
    const after = await diffClickHouse(resumedDb.client, { window, rules });
    expect(after.toWrite).toEqual({ carrier_polls: 0, events: 0, shipments: 0 });
    // `db` had the same polls and one uninterrupted apply (the test before).
    expect(await snapshot(resumedDb.client)).toEqual(await snapshot(db.client));
  }, 90_000);

  it('--apply to the embedded default records the mapping, after which its stored events follow it', async () => {
    const before = diffOf(await cli(['--from-embedded', '--diff', '--data-dir', dataDir, '--config', config]));
    expect(before.changed).toBeGreaterThan(0);
    const applied = await cli(['--from-embedded', '--apply', '--yes', '--data-dir', dataDir, '--config', config]);
    expect(applied.status, applied.stderr).toBe(0);
    expect(applied.stderr).toMatch(/recorded as applied/);
    expect(diffOf(await cli(['--from-embedded', '--diff', '--data-dir', dataDir, '--config', config]))).toMatchObject({ changed: 0 });
    // Against the original rules the same events now differ the other way.
    const reverse = diffOf(await cli(['--from-embedded', '--diff', '--data-dir', dataDir]));
    expect(reverse.rows).toEqual([{ carrier: 'dtdc', from: 'in_transit/received', to: 'out_for_delivery/out_for_delivery', count: before.changed }]);
  }, 60_000);
});
