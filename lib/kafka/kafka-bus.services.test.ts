/** The Kafka bus against the real broker (npm run services -- up). */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CarrierPollSchema, type CarrierPoll } from '../schemas/index.ts';
import { journeyPoll } from '../testing/polls.ts';
import { KafkaBus } from './kafka-bus.ts';
import { collect, testKafka } from './testing.ts';
import { POLLS_TOPIC } from './topics.ts';

const kafka = testKafka();
const buses: KafkaBus[] = [];
afterAll(async () => { await Promise.all(buses.map((b) => b.close())); });

function uniquePolls(n: number): CarrierPoll[] {
  const run = Date.now() % 1_000_000;
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

describe('Kafka bus', () => {
  it('publishes every poll keyed by carrier:AWB, with its mode', async () => {
    const bus = new KafkaBus({ kafka, dataDir: mkdtempSync(join(tmpdir(), 'bus-')) });
    buses.push(bus);
    const polls = uniquePolls(50);
    for (const poll of polls) bus.publish(poll, 'test');
    await bus.flush();
    const got = await collect(kafka, POLLS_TOPIC, decodeFor(polls), (items) => items.length >= polls.length);
    expect(got).toHaveLength(50);
    const first = got.find((g) => g.poll.poll_id === polls[0]!.poll_id);
    expect(first).toMatchObject({ key: `delhivery:${polls[0]!.awb}`, mode: 'test' });
    expect(new Set(got.map((g) => g.poll.poll_id))).toEqual(new Set(polls.map((p) => p.poll_id)));
  }, 90_000);

  it('spools polls to disk while the broker is unreachable and publishes them in order once it is back', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bus-'));
    const errors: unknown[] = [];
    // A broker address nothing listens on: every send fails, as during an outage.
    const down = new KafkaBus({ kafka: testKafka('127.0.0.1:9'), dataDir, onError: (e) => errors.push(e), retryDelayMs: 60_000 });
    // One shipment polled 30 times: one key, one partition, so Kafka keeps their order.
    const awb = uniquePolls(1)[0]!.awb;
    const polls = uniquePolls(30).map((p) => ({ ...p, awb }));
    for (const poll of polls.slice(0, 10)) down.publish(poll, 'live');
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    for (const poll of polls.slice(10)) down.publish(poll, 'live');
    expect(down.spooled).toBe(true);
    await down.close();
    expect(errors.length).toBeGreaterThan(0);
    const spooled = readFileSync(join(dataDir, 'spool', 'carrier-polls.ndjson'), 'utf8').trim().split('\n');
    expect(spooled.map((l) => JSON.parse(JSON.parse(l).value).poll_id)).toEqual(polls.map((p) => p.poll_id));

    // The next start, with the broker back, publishes the spool first.
    const back = new KafkaBus({ kafka, dataDir });
    buses.push(back);
    await back.flush();
    expect(back.spooled).toBe(false);
    const got = await collect(kafka, POLLS_TOPIC, decodeFor(polls), (items) => items.length >= polls.length);
    expect(got.map((g) => g.poll.poll_id)).toEqual(polls.map((p) => p.poll_id));
  }, 90_000);
});
