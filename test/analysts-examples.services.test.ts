/**
 * The analysts' guide's example answers, end to end on the distributed stack: the network history
 * the guide names (`npm run cli -- sandbox history … --into-stores`, a real process) goes through
 * Kafka to the normalizer (its start function, as `npm run normalizer` runs it) into ClickHouse;
 * once every poll is stored and the lanes are refreshed, every question of docs/analysts.md answers,
 * in test mode, exactly the rows its example shows (through `npm run cli -- sql` too), and in live
 * mode nothing (the history is test mode only). docs/analysts/tables.md's row counts are this
 * database's. The lane refresh's clock is pinned to the history's end and the questions' `as_of` is
 * that end, so the answers are the same at every run.
 *
 * Isolation: a ClickHouse database, a Kafka topic and a consumer group of this run's own (the
 * history's AWBs are the same at every run: another run's must not reach this database).
 *
 * ANALYSTS_EXAMPLES_WRITE=1 rewrites the examples and the counts from this run instead of comparing
 * (after a change of the network model, the normalizer or a question); the diff is then reviewed.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guideQuestions } from '../apps/cli/commands/guide.ts';
import { startNormalizer, type NormalizerApp } from '../apps/normalizer/start.ts';
import { bindQueryParams } from '../lib/clickhouse/params.ts';
import { TEST_CLICKHOUSE_URL, countOf, createTestDatabase, rowsOf, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { guideExamples, guideHistory, renderExample, shownCell, SHOWN_ROWS, tableCounts, withExamples, withTableCounts } from './support/guide-examples.ts';
import { sqlCli } from './support/sql-cli.ts';

const ROOT = resolve(import.meta.dirname, '..');
const NODE = process.execPath; // node runs the TypeScript itself
const GUIDE = join(ROOT, 'docs/analysts.md');
const TABLES = join(ROOT, 'docs/analysts/tables.md');
const WRITE = process.env.ANALYSTS_EXAMPLES_WRITE === '1';
const guide = readFileSync(GUIDE, 'utf8');
const HISTORY = guideHistory(guide);
const END_MS = Date.parse(HISTORY.end);
const QUESTIONS = guideQuestions(guide);
const RUN = randomUUID().slice(0, 8);
const topic = `test-analysts-${RUN}`;
const groupId = `test-analysts-${RUN}`;

type Row = Record<string, unknown>;
let kafka: Kafka;
let db: TestDatabase;
let normalizer: NormalizerApp;
let dataDir: string;
/** Each question's answer in test mode, columns in order. */
const answers = new Map<string, { columns: string[]; rows: Row[] }>();

async function until(check: () => Promise<boolean>, what: string, ms = 240_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A read retried on a dropped keep-alive socket ("socket hang up" on a loaded machine): reads are idempotent. */
async function read<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 5 || !/socket hang up|ECONNRESET/.test(String((err as Error).message))) throw err;
    }
  }
}

const ask = (sql: string, mode: string) => read(async () => {
  const answer = await (await db.client.query({ query: bindQueryParams(sql, { mode, as_of: HISTORY.end }), format: 'JSON' })).json<Row>();
  return { columns: answer.meta?.map((m) => m.name) ?? [], rows: answer.data };
});

beforeAll(async () => {
  expect(Number.isNaN(END_MS)).toBe(false);
  kafka = testKafka();
  db = await createTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'analysts-examples-'));
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
  await admin.disconnect();
  const env = loadEnv({ KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'error' });
  // The refresh is called below once everything is stored; its window ends at the history's end.
  normalizer = await startNormalizer(env, { database: db.target.database, topic, groupId, healthPort: null, laneRefreshCron: '0 0 1 1 *', laneClock: () => END_MS });

  // The guide's command word for word, plus --topic (this run's own) and --out (what was sent).
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, KAFKA_BROKERS: TEST_BROKERS, DATA_DIR: dataDir };
  delete cliEnv.CLICKHOUSE_URL;
  delete cliEnv.REDIS_URL;
  const { stderr } = await promisify(execFile)(NODE, ['apps/cli/main.ts', 'sandbox', 'history', '--shipments', String(HISTORY.shipments), '--days', String(HISTORY.days),
    '--seed', String(HISTORY.seed), '--end', HISTORY.end, '--into-stores', '--topic', topic], { cwd: ROOT, env: cliEnv, encoding: 'utf8' });
  const polls = Number(/(\d+) polls → /.exec(stderr)?.[1]);
  expect(polls, stderr).toBeGreaterThan(HISTORY.shipments * 2);

  await until(async () => (await read(() => countOf(db.client, 'SELECT count() AS c FROM carrier_polls'))) >= polls, `${polls} polls in ClickHouse`);
  // lane_closures rows are written after the rows they come from (LaneClosureSink), and a batch is
  // committed only once both are stored: every partition committed to its end means every closure
  // is in. (Waiting for two equal counts of lane_closures half a second apart settled too early on
  // a loaded machine, between two of the sink's flushes: 6,557 lane_stats rows instead of 6,810.)
  const offsets = kafka.admin();
  await offsets.connect();
  try {
    const ends = await offsets.fetchTopicOffsets(topic);
    await until(async () => {
      const [committed] = await offsets.fetchOffsets({ groupId, topics: [topic] });
      return ends.every((e) => BigInt(committed!.partitions.find((p) => p.partition === e.partition)?.offset ?? '-1') >= BigInt(e.high));
    }, 'the normalizer to commit every partition to its end');
  } finally {
    await offsets.disconnect();
  }
  await normalizer.refreshLanes();
  expect(await countOf(db.client, 'SELECT count() AS c FROM lane_stats')).toBeGreaterThan(0);
  for (const q of QUESTIONS) answers.set(q.id, await ask(q.sql, 'test'));
}, 600_000);

afterAll(async () => {
  await normalizer?.stop();
  const admin = kafka?.admin();
  if (admin) {
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
  await db?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('docs/analysts.md examples from the network history (Kafka → normalizer → ClickHouse)', () => {
  it('each question has its example, and the examples are those answers (test mode)', () => {
    const examples = guideExamples(readFileSync(GUIDE, 'utf8'));
    if (WRITE) {
      writeFileSync(GUIDE, withExamples(readFileSync(GUIDE, 'utf8'), (id) => renderExample(answers.get(id)!.columns, answers.get(id)!.rows)));
      return;
    }
    expect([...examples.keys()]).toEqual(QUESTIONS.map((q) => q.id));
    for (const q of QUESTIONS) {
      const example = examples.get(q.id);
      expect(example, `${q.id} has no example answer after its query`).toBeTruthy();
      const { columns, rows } = answers.get(q.id)!;
      expect(rows.length, q.id).toBe(example!.total);
      if (rows.length === 0) continue;
      expect(example!.columns, q.id).toEqual(columns);
      expect(example!.rows, q.id).toEqual(rows.slice(0, SHOWN_ROWS).map((r) => columns.map((c) => shownCell(r[c]))));
    }
  });

  it('the examples are not all empty: the lane, window and month questions answer from the history', () => {
    const empty = QUESTIONS.filter((q) => answers.get(q.id)!.rows.length === 0).map((q) => q.id);
    // q11 reads customers' analyses, which the history does not make.
    expect(empty).toEqual(['q11']);
  });

  it('live mode answers nothing from the history: it is test mode only', async () => {
    for (const q of QUESTIONS) expect((await ask(q.sql, 'live')).rows, q.id).toEqual([]);
  });

  it('`npm run cli -- sql <n> --mode test --param as_of=<end>` prints the example\'s rows; live mode prints the guide\'s hint', async () => {
    const cli = sqlCli(db.target.database);
    for (const q of QUESTIONS) {
      const n = q.id.slice(1);
      expect(JSON.parse(await cli(n, '--mode', 'test', '--param', `as_of=${HISTORY.end}`, '--format', 'json')), q.id).toEqual(answers.get(q.id)!.rows);
      const live = await cli(n, '--param', `as_of=${HISTORY.end}`);
      const hint = '(no rows: no live shipments closed in the question\'s window; with only trk_test_ keys, add --mode test)';
      expect(live, q.id).toContain(hint);
      expect(readFileSync(GUIDE, 'utf8'), 'the guide shows the live hint as printed').toContain(hint);
    }
    // The table's header names the moment the windows end.
    expect(await cli('10', '--mode', 'test', '--param', `as_of=${HISTORY.end}`)).toMatch(/^10\. Daily closures by outcome, last 14 days \(mode test; as of 2026-11-27 00:00:00 UTC; /);
  });

  it('docs/analysts/tables.md: every table of the database, and the row counts of this history', async () => {
    const tables = (await rowsOf<{ name: string; engine: string }>(db.client, `SELECT name, engine FROM system.tables WHERE database = currentDatabase() ORDER BY name`));
    const counts = new Map<string, number>();
    for (const t of tables) {
      if (t.engine === 'MaterializedView') continue;
      // Replacing tables counted as merged (FINAL): unmerged duplicates depend on when parts merged.
      counts.set(t.name, await countOf(db.client, `SELECT count() AS c FROM ${t.name}${t.engine.startsWith('Replacing') ? ' FINAL' : ''}`));
    }
    if (WRITE) { writeFileSync(TABLES, withTableCounts(readFileSync(TABLES, 'utf8'), counts)); return; }
    const shown = tableCounts(readFileSync(TABLES, 'utf8'));
    expect([...shown.keys()].sort()).toEqual(tables.filter((t) => t.engine !== 'MaterializedView').map((t) => t.name).sort());
    for (const [table, count] of shown) if (count !== null) expect(counts.get(table), table).toBe(count);
    expect([...shown.values()].filter((c) => c !== null).length).toBeGreaterThanOrEqual(6);
  });
});
