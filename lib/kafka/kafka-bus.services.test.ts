/** The Kafka bus against the real broker (npm run services -- up): exactly once, through outages, kills and shared DATA_DIRs. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CarrierPollSchema, type CarrierPoll } from '../schemas/index.ts';
import { journeyPoll } from '../testutil/polls.ts';
import { KafkaBus } from './kafka-bus.ts';
import { readPollWindow } from './read-window.ts';
import { collect, testKafka, TEST_BROKERS } from './testutil/broker.ts';
import { POLLS_TOPIC } from './topics.ts';

const kafka = testKafka();
const buses: KafkaBus[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(buses.map((b) => b.close()));
});
/** Nothing listens there: every send fails, as during an outage. */
const NO_BROKER = '127.0.0.1:9';
const CHILD = fileURLToPath(new URL('./testutil/bus-child.ts', import.meta.url));

let run = Date.now() % 1_000_000;
function uniquePolls(n: number): CarrierPoll[] {
  run++;
  return Array.from({ length: n }, (_, i) => ({ ...journeyPoll('delhivery', i), awb: `${run}${String(i).padStart(6, '0')}02` }));
}

function decodeFor(polls: CarrierPoll[]) {
  const ids = new Set(polls.map((p) => p.poll_id));
  return (key: string, value: string, headers: Record<string, string>) => {
    // The topic is shared with other tests (and may hold junk): keep only this test's polls.
    let poll: CarrierPoll;
    try {
      poll = CarrierPollSchema.parse(JSON.parse(value));
    } catch {
      return null;
    }
    return ids.has(poll.poll_id) ? { key, poll, mode: headers.mode } : null;
  };
}

/** How many times each of `polls` is on the topic (committed messages), read to the end of the log. */
async function copiesOnTopic(polls: CarrierPoll[], sinceMs: number): Promise<Map<string, number>> {
  const copies = new Map(polls.map((p) => [p.poll_id, 0]));
  await readPollWindow(kafka, { sinceMs }, (value) => {
    const id = (JSON.parse(value) as { poll_id?: string }).poll_id;
    if (id !== undefined && copies.has(id)) copies.set(id, copies.get(id)! + 1);
  });
  return copies;
}

function writePolls(polls: CarrierPoll[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'bus-polls-')), 'polls.jsonl');
  writeFileSync(file, polls.map((p) => JSON.stringify(p)).join('\n') + '\n');
  return file;
}

/** Starts a bus child and resolves once it printed `line`. */
function child(dataDir: string, brokers: string, polls: CarrierPoll[], line: 'open' | 'published' | 'flushed'): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [CHILD, dataDir, brokers, writePolls(polls)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.split('\n').includes(line)) resolve(proc);
    });
    proc.once('exit', (code) => reject(new Error(`bus child exited (${code}) before "${line}": ${err}`)));
  });
}

const slotsOf = (dataDir: string) => readdirSync(join(dataDir, 'spool', 'carrier-polls')).sort();
const killed = (proc: ChildProcess) => new Promise((resolve) => { proc.once('exit', resolve); proc.kill('SIGKILL'); });

describe('Kafka bus', () => {
  it('publishes every poll keyed by carrier:AWB, with its mode', async () => {
    const bus = await KafkaBus.open({ kafka, dataDir: mkdtempSync(join(tmpdir(), 'bus-')) });
    buses.push(bus);
    const polls = uniquePolls(50);
    for (const poll of polls) bus.publish(poll, 'test');
    await bus.flush();
    expect(bus.health()).toMatchObject({ target: 'kafka', ok: true, spool_bytes: 0 });
    const got = await collect(kafka, POLLS_TOPIC, decodeFor(polls), (items) => items.length >= polls.length);
    expect(got).toHaveLength(50);
    const first = got.find((g) => g.poll.poll_id === polls[0]!.poll_id);
    expect(first).toMatchObject({ key: `delhivery:${polls[0]!.awb}`, mode: 'test' });
    expect(new Set(got.map((g) => g.poll.poll_id))).toEqual(new Set(polls.map((p) => p.poll_id)));
  }, 90_000);

  it('keeps polls on disk while the broker is unreachable, says so, and publishes them in order once it is back', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bus-'));
    const errors: unknown[] = [];
    const down = await KafkaBus.open({ kafka: testKafka(NO_BROKER), dataDir, onError: (e) => errors.push(e), retryDelayMs: 60_000 });
    // One shipment polled 30 times: one key, one partition, so Kafka keeps their order.
    const awb = uniquePolls(1)[0]!.awb;
    const polls = uniquePolls(30).map((p) => ({ ...p, awb }));
    for (const poll of polls.slice(0, 10)) down.publish(poll, 'live');
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    for (const poll of polls.slice(10)) down.publish(poll, 'live');
    expect(down.spooled).toBe(true);
    const health = down.health();
    expect(health.ok).toBe(false);
    expect(health.spool_bytes).toBeGreaterThan(10_000);
    expect(health.oldest_unsent_age_s).toBeGreaterThanOrEqual(3);
    expect(errors).toHaveLength(1); // said once per outage, not at every retry
    await down.close();
    const segments = readdirSync(join(dataDir, 'spool', 'carrier-polls', '0')).filter((f) => f.endsWith('.ndjson'));
    const spooled = segments.flatMap((f) => readFileSync(join(dataDir, 'spool', 'carrier-polls', '0', f), 'utf8').trim().split('\n'));
    expect(spooled.map((l) => JSON.parse(JSON.parse(l).value).poll_id)).toEqual(polls.map((p) => p.poll_id));

    // The next start, with the broker back, publishes the spool first.
    const back = await KafkaBus.open({ kafka, dataDir });
    buses.push(back);
    await back.flush();
    expect(back.spooled).toBe(false);
    expect(back.health()).toMatchObject({ ok: true, spool_bytes: 0, oldest_unsent_age_s: 0 });
    const got = await collect(kafka, POLLS_TOPIC, decodeFor(polls), (items) => items.length >= polls.length);
    expect(got.map((g) => g.poll.poll_id)).toEqual(polls.map((p) => p.poll_id));
  }, 90_000);

  it('sends every poll exactly once when the process is killed in the middle of a drain', async () => {
    const sinceMs = Date.now() - 1_000;
    const dataDir = mkdtempSync(join(tmpdir(), 'bus-'));
    const polls = uniquePolls(20_000);
    // 1. A process spools 20,000 polls while Kafka is away, and dies.
    await killed(await child(dataDir, NO_BROKER, polls, 'published'));
    // 2. The next one drains them to the real broker, and is killed once part of the spool is sent.
    const draining = await child(dataDir, TEST_BROKERS, [], 'open');
    const position = join(dataDir, 'spool', 'carrier-polls', '0', 'position');
    for (let i = 0; i < 600 && !existsSync(position); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(position)).toBe(true);
    await killed(draining);
    const partly = JSON.parse(readFileSync(position, 'utf8')) as { segment: number; byte: number };
    // 3. A bus started on the same DATA_DIR sends the rest.
    const bus = await KafkaBus.open({ kafka, dataDir });
    buses.push(bus);
    await bus.flush();
    const copies = await copiesOnTopic(polls, sinceMs);
    const counts = [...copies.values()];
    expect(counts.filter((n) => n === 0)).toHaveLength(0);
    expect(counts.filter((n) => n > 1)).toHaveLength(0);
    // The kill did land mid-drain: part sent before it, the rest after.
    expect(partly.segment * 2 ** 32 + partly.byte).toBeGreaterThan(0);
  }, 180_000);

  it('gives two processes on one DATA_DIR a spool each, and drains a dead one\'s spool once', async () => {
    const sinceMs = Date.now() - 1_000;
    const dataDir = mkdtempSync(join(tmpdir(), 'bus-'));
    const first = uniquePolls(300);
    const second = uniquePolls(300);
    const orphaned = uniquePolls(300);
    // Two live processes at once: two slots, both sent.
    const a = await child(dataDir, TEST_BROKERS, first, 'flushed');
    const b = await child(dataDir, TEST_BROKERS, second, 'flushed');
    expect(slotsOf(dataDir)).toEqual(['0', '1']);
    // A third, while Kafka is away for it, spools and dies: slot 2 is left with unsent polls.
    await killed(await child(dataDir, NO_BROKER, orphaned, 'published'));
    expect(slotsOf(dataDir)).toEqual(['0', '1', '2']);
    await Promise.all([killed(a), killed(b)]);
    // One bus now: it takes slot 0 and drains the others' leftovers, then removes their slots.
    const bus = await KafkaBus.open({ kafka, dataDir });
    buses.push(bus);
    await bus.flush();
    expect(slotsOf(dataDir)).toEqual(['0']);
    const copies = await copiesOnTopic([...first, ...second, ...orphaned], sinceMs);
    expect([...copies.values()].every((n) => n === 1)).toBe(true);
  }, 180_000);

  it('gives a second bus in the same process a slot of its own', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bus-'));
    const one = await KafkaBus.open({ kafka, dataDir });
    const two = await KafkaBus.open({ kafka, dataDir });
    buses.push(one, two);
    expect(slotsOf(dataDir)).toEqual(['0', '1']);
  });
});
