import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizePoll } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { JOURNEYS, journeyPoll } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { createClickHouseClient } from './client.ts';
import { toRows, type PollRows } from './rows.ts';
import { sqlString } from './sql.ts';
import { countOf, createTestDatabase, rowsOf, startFaultyProxy, type FaultyProxy, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter, WriterClosedError, type ClickHouseWriterOptions, type FlushReport } from './writer.ts';

const { rules } = product;
const here = dirname(fileURLToPath(import.meta.url));
const CARRIERS = Object.keys(JOURNEYS);

function rowsFor(poll: CarrierPoll): PollRows {
  return toRows(poll, normalizePoll(poll, rules), rules.mappingVersion);
}

/** Polls with AWBs unique to one test, so tests sharing the database count only their own rows. */
let nextIndex = 1_000;
function freshPolls(n: number): CarrierPoll[] {
  return Array.from({ length: n }, (_, i) => journeyPoll(CARRIERS[i % CARRIERS.length]!, nextIndex++));
}

/** A writer whose flush reports can be awaited (no sleeping: the test waits for the event itself). */
function observedWriter(db: TestDatabase, options: ClickHouseWriterOptions = {}, client = db.client) {
  const reports: FlushReport[] = [];
  const waiters: { test: (r: FlushReport) => boolean; resolve: (r: FlushReport) => void }[] = [];
  const writer = new ClickHouseWriter(client, {
    ...options,
    onFlush(report) {
      reports.push(report);
      for (const w of [...waiters]) {
        if (w.test(report)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(report);
        }
      }
    },
  });
  const nextReport = (test: (r: FlushReport) => boolean = () => true) =>
    new Promise<FlushReport>((resolve) => {
      const seen = reports.find(test);
      if (seen) resolve(seen);
      else waiters.push({ test, resolve });
    });
  return { writer, reports, nextReport };
}

async function countsFor(db: TestDatabase, polls: CarrierPoll[]) {
  const awbs = `(${polls.map((p) => sqlString(p.awb)).join(', ')})`;
  return {
    polls: await countOf(db.client, `SELECT count() AS c FROM carrier_polls WHERE awb IN ${awbs}`),
    events: await countOf(db.client, `SELECT count() AS c FROM events WHERE awb IN ${awbs}`),
    distinctEvents: await countOf(db.client, `SELECT uniqExact(event_id) AS c FROM events WHERE awb IN ${awbs}`),
    shipments: await countOf(db.client, `SELECT count() AS c FROM shipments WHERE awb IN ${awbs}`),
  };
}

function expectedCounts(polls: CarrierPoll[]) {
  const rows = polls.map(rowsFor);
  const events = rows.reduce((n, r) => n + r.events.length, 0);
  return { polls: polls.length, events, distinctEvents: events, shipments: rows.filter((r) => r.shipment).length };
}

describe('ClickHouseWriter (real ClickHouse)', () => {
  let db: TestDatabase;
  const dirs: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('writing the same polls twice leaves no duplicate rows in plain queries', async () => {
    const polls = freshPolls(3);
    const { writer, nextReport } = observedWriter(db);
    writer.write(polls.map(rowsFor));
    await writer.flush();
    const first = await countsFor(db, polls);
    expect(first).toEqual(expectedCounts(polls));
    expect(first.events).toBe(30);

    // Re-delivered (converted again from the same polls), twice in one batch for good measure.
    writer.write([...polls.map(rowsFor), ...polls.map(rowsFor)]);
    await writer.flush();
    expect(await countsFor(db, polls)).toEqual(first);
    const second = await nextReport((r) => r.rows.events === 60);
    expect(second.inserted).toEqual({ carrier_polls: 0, events: 0, shipments: 0 });
    expect(second.duplicates).toEqual({ carrier_polls: 6, events: 60, shipments: 6 });
    await writer.close();
  });

  it('a re-poll of a shipment adds only its new events (each poll lists every scan)', async () => {
    const full = freshPolls(1)[0]!;
    const ordered = [...full.scans].sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
    const earlier: CarrierPoll = { ...full, poll_id: '00000000-0000-4000-8000-000000000001', polled_at: '2026-11-11T00:00:00.000Z', scans: ordered.slice(0, 6) };
    const later: CarrierPoll = { ...full, poll_id: '00000000-0000-4000-8000-000000000002', scans: ordered };
    const { writer, nextReport } = observedWriter(db);
    writer.write(rowsFor(earlier));
    await writer.flush();
    writer.write(rowsFor(later));
    await writer.flush();
    const second = await nextReport((r) => r.rows.events === 10);
    expect(second.inserted.events).toBe(4);
    expect(second.duplicates.events).toBe(6);
    expect(await countsFor(db, [full])).toEqual({ polls: 2, events: 10, distinctEvents: 10, shipments: 2 });
    // Two shipments rows until they merge: the latest state is the newer poll's.
    const awb = sqlString(full.awb);
    const [latest] = await rowsOf<{ stage: string; poll_id: string }>(db.client,
      `SELECT argMax(stage, version) AS stage, argMax(poll_id, version) AS poll_id FROM shipments WHERE awb = ${awb} GROUP BY carrier, awb`);
    expect(latest).toEqual({ stage: 'delivered', poll_id: later.poll_id });
    expect(await countOf(db.client, `SELECT count() AS c FROM shipments FINAL WHERE awb = ${awb}`)).toBe(1);
    await writer.close();
  });

  it('asks ClickHouse only about rows that can be stored: none of a new shipment\'s events, all of a re-poll\'s', async () => {
    const full = freshPolls(1)[0]!;
    const { writer, nextReport } = observedWriter(db);
    writer.write(rowsFor(full));
    await writer.flush();
    const first = await nextReport((r) => r.inserted.carrier_polls === 1 && r.rows.events === 10);
    // A new shipment: carrier_polls answered "no stored poll", so events and shipments are not asked about.
    expect(first.checkedRows).toEqual({ carrier_polls: 1, events: 0, shipments: 0 });
    writer.write(rowsFor({ ...full, poll_id: '00000000-0000-4000-8000-0000000000a2', polled_at: '2026-11-14T00:00:00.000Z' }));
    await writer.flush();
    const second = await nextReport((r) => r.rows.events === 10 && r.duplicates.events === 10);
    // Its poll is stored now: every event is asked about (and found); the new poll's shipments row is not.
    expect(second.checkedRows).toEqual({ carrier_polls: 1, events: 10, shipments: 0 });
    await writer.close();
  });

  it('a batch re-delivered after a crash (part flushed, part only queued) is stored exactly once', async () => {
    const polls = freshPolls(8);
    const dir = mkdtempSync(join(tmpdir(), 'ch-crash-'));
    dirs.push(dir);
    const file = join(dir, 'polls.ndjson');
    writeFileSync(file, polls.map((p) => JSON.stringify(p)).join('\n'));

    // The dying normalizer flushed the first 3 polls, queued the other 5, and was killed.
    // node itself, with no launcher between: the killed process is the child.
    const child = spawn(process.execPath, [join(here, 'testutil/crash-child.ts'), db.target.url, db.target.database, file, '3'], {
      cwd: resolve(here, '../..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = await new Promise<NodeJS.Signals | number | null>((done) => child.on('exit', (code, signal) => done(signal ?? code)));
    expect(stdout, stderr).toBe('ready\n');
    expect(exit).toBe('SIGKILL');
    expect(await countsFor(db, polls)).toEqual(expectedCounts(polls.slice(0, 3)));

    // Kafka re-delivers the whole batch to a new normalizer.
    const { writer, nextReport } = observedWriter(db);
    writer.write(polls.map(rowsFor));
    await writer.flush();
    expect(await countsFor(db, polls)).toEqual(expectedCounts(polls));
    const report = await nextReport();
    expect(report.duplicates).toEqual({ carrier_polls: 3, events: 30, shipments: 3 });
    expect(report.inserted).toEqual({ carrier_polls: 5, events: 50, shipments: 5 });
    await writer.close();
  });

  it('flushes on size without being asked', async () => {
    const polls = freshPolls(2);
    const { writer, nextReport } = observedWriter(db, { maxBatchRows: 20, flushIntervalMs: 3_600_000 });
    writer.write(rowsFor(polls[0]!));
    expect(writer.stats().queued).toEqual({ carrier_polls: 1, events: 10, shipments: 1 });
    writer.write(rowsFor(polls[1]!)); // the events queue reaches 20
    const report = await nextReport();
    expect(report.reason).toBe('size');
    expect(report.inserted).toEqual({ carrier_polls: 2, events: 20, shipments: 2 });
    expect(await countsFor(db, polls)).toEqual(expectedCounts(polls));
    await writer.close();
  });

  it('flushes on time without being asked', async () => {
    const polls = freshPolls(1);
    const { writer, nextReport } = observedWriter(db, { maxBatchRows: 5_000, flushIntervalMs: 20 });
    writer.write(rowsFor(polls[0]!));
    const report = await nextReport();
    expect(report.reason).toBe('timer');
    expect(report.inserted).toEqual({ carrier_polls: 1, events: 10, shipments: 1 });
    expect(await countsFor(db, polls)).toEqual(expectedCounts(polls));
    await writer.close();
  });

  describe('through a proxy that cuts connections', () => {
    let proxy: FaultyProxy;
    let client: ReturnType<typeof createClickHouseClient>;
    beforeAll(async () => {
      proxy = await startFaultyProxy();
      client = createClickHouseClient({ url: proxy.url, database: db.target.database });
    });
    afterAll(async () => {
      await client?.close();
      await proxy?.close();
    });

    it('retries transient failures with backoff and stores everything once', async () => {
      const polls = freshPolls(4);
      const { writer, nextReport } = observedWriter(db, { initialRetryDelayMs: 5, maxRetryDelayMs: 20 }, client);
      await writer.ping(); // a pooled connection for the proxy to cut
      proxy.failNext(2);
      writer.write(polls.map(rowsFor));
      await writer.flush();
      const report = await nextReport();
      expect(report.error).toBeUndefined();
      expect(report.retries).toBeGreaterThanOrEqual(1);
      expect(proxy.cut).toBeGreaterThan(0);
      expect(await countsFor(db, polls)).toEqual(expectedCounts(polls));
      await writer.close();
    });

    it('keeps the rows of a failed flush queued; a later flush() stores them', async () => {
      const polls = freshPolls(3);
      const { writer, nextReport } = observedWriter(db, { maxRetries: 0, flushIntervalMs: 20 }, client);
      proxy.down();
      writer.write(polls.map(rowsFor));
      // The timer's flush fails in the background: nobody awaits it, the rows must not be lost.
      const failed = await nextReport((r) => r.error !== undefined);
      expect(failed.reason).toBe('timer');
      expect(failed.error?.message).toMatch(/^inserting \d+ rows into carrier_polls failed/);
      expect(writer.queuedRows).toBeGreaterThan(0);
      await expect(writer.flush()).rejects.toThrow(/carrier_polls failed/);
      expect(await countsFor(db, polls)).toEqual({ polls: 0, events: 0, distinctEvents: 0, shipments: 0 });

      proxy.up();
      // A pooled socket the proxy cut may answer its next request with a reset (this writer has no
      // retries): wait until the connection answers again, then flush.
      for (let i = 0; i < 100 && !(await writer.ping()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      await writer.flush();
      expect(writer.queuedRows).toBe(0);
      expect(await countsFor(db, polls)).toEqual(expectedCounts(polls));
      await writer.close();
    });

    it('ping answers false while ClickHouse is unreachable', async () => {
      const writer = new ClickHouseWriter(client);
      proxy.down();
      expect(await writer.ping()).toBe(false);
      proxy.up();
      expect(await writer.ping()).toBe(true);
    });
  });

  it('does not retry errors a retry cannot fix, and reports ClickHouse\'s message', async () => {
    const empty = await createTestDatabase({ migrate: false });
    try {
      const { writer, nextReport } = observedWriter(empty, { initialRetryDelayMs: 1 });
      writer.write(rowsFor(freshPolls(1)[0]!));
      await expect(writer.flush()).rejects.toThrow(/carrier_polls failed: .*(doesn't exist|does not exist)/);
      expect((await nextReport()).retries).toBe(0);
    } finally {
      await empty.drop();
    }
  });

  it('close() flushes what is queued and refuses later writes', async () => {
    const polls = freshPolls(2);
    const writer = new ClickHouseWriter(db.client, { flushIntervalMs: 3_600_000 });
    writer.write(polls.map(rowsFor));
    await writer.close();
    expect(await countsFor(db, polls)).toEqual(expectedCounts(polls));
    expect(() => writer.write(rowsFor(polls[0]!))).toThrow(WriterClosedError);
    expect(writer.stats().inserted).toEqual({ carrier_polls: 2, events: 20, shipments: 2 });
  });

  it('abandon() lets the insert under way finish, drops the queued rows, rejects their waiters and refuses later writes', async () => {
    const [first, second, third] = freshPolls(3) as [CarrierPoll, CarrierPoll, CarrierPoll];
    // One write per insert: the first is under way while the other two wait in the queue.
    const writer = new ClickHouseWriter(db.client, { flushIntervalMs: 3_600_000, maxBatchRows: 1 });
    writer.write(rowsFor(first));
    const firstStored = writer.flush();
    writer.write(rowsFor(second));
    writer.write(rowsFor(third));
    const allStored = writer.flush();
    allStored.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    const dropped = await writer.abandon();
    await expect(firstStored).resolves.toBeUndefined();
    await expect(allStored).rejects.toThrow(/stopped before these rows were inserted/);
    const rows = [second, third].map(rowsFor);
    expect(dropped).toBe(rows.reduce((n, r) => n + 1 + r.events.length + (r.shipment ? 1 : 0), 0));
    expect(await countsFor(db, [first])).toEqual(expectedCounts([first]));
    expect(await countsFor(db, [second, third])).toEqual({ polls: 0, events: 0, distinctEvents: 0, shipments: 0 });
    expect(() => writer.write(rowsFor(second))).toThrow(WriterClosedError);
  });
});
