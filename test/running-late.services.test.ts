/**
 * tracking.running_late in distributed mode, against the real services: the delivery model built in
 * ClickHouse (observations → cells, read by ClickHousePredictionSource as the normalizer reads it),
 * watches in Redis, polls consumed from Kafka by the push detector (PollChangeConsumer) as each
 * normalizer runs it. A watch promised for a day already passed hears running_late once, its records
 * carry the promise, and nothing more after the delivery.
 *
 * Isolation: a ClickHouse database, a Redis namespace, a Kafka topic and consumer group of its own.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { deleteUnder, testNamespace, testRedisUrl } from '../lib/access/testutil/stores.ts';
import { loadCalendar } from '../lib/calendar/index.ts';
import { ClickHousePredictionSource, PredictionObservationSink, rebuildPredictionModel } from '../lib/clickhouse/prediction.ts';
import type { PollRows } from '../lib/clickhouse/rows.ts';
import { createTestDatabase, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { ClickHouseWriter } from '../lib/clickhouse/writer.ts';
import { testKafka } from '../lib/kafka/testutil/broker.ts';
import { RedisKv } from '../lib/kv/index.ts';
import { normalizePoll } from '../lib/normalize/index.ts';
import { processPollMessage } from '../lib/pipeline/process-poll.ts';
import { loadPlaces } from '../lib/places/index.ts';
import { placeLookupOf, WorkdayIndex } from '../lib/prediction/index.ts';
import { otherNetworkPolls } from '../lib/prediction/testutil/other-network.ts';
import { ChangeDetector, PollChangeConsumer, WatchStore, type EventLog, type WebhookEvent } from '../lib/push/index.ts';
import { EVERY_KEY_ACTIVE } from '../lib/push/testutil/receiver.ts';
import { requireAwb, type CarrierPoll, type TrackingRecord } from '../lib/schemas/index.ts';
import { product } from '../lib/testutil/product.ts';
import { DAY_MS, HOUR_MS } from '../lib/time/index.ts';
import { addDays, istDayOf } from '../lib/time/ist-day.ts';

const RUN = randomBytes(4).toString('hex');
const PREFIX = 'trk_live_Late001';
const calendar = loadCalendar();
const workdays = new WorkdayIndex(calendar);
const places = placeLookupOf(loadPlaces());
const START = Date.parse('2026-03-01T00:00:00+05:30');
const SPLIT = START + 50 * DAY_MS;

class CollectingLog implements EventLog {
  events: WebhookEvent[] = [];
  async publish(events: readonly WebhookEvent[]) { this.events.push(...events); }
  async close() {}
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => { for (const c of cleanups.reverse()) await c(); }, 60_000);

it('a ClickHouse-built model, Redis watches, Kafka polls: running_late once with the promise, none after delivery', async () => {
  const db: TestDatabase = await createTestDatabase();
  cleanups.push(() => db.drop());
  const polls = [...otherNetworkPolls({ shipments: 2000, days: 60, seed: 41, calendar, startMs: START })];

  // The model: the history before the split, observed and rebuilt in ClickHouse.
  const writer = new ClickHouseWriter(db.client, { maxBatchRows: 20_000 });
  const sink = new PredictionObservationSink(writer, db.client, places, workdays);
  const rows: PollRows[] = [];
  for (const poll of polls.filter((p) => Date.parse(p.polled_at) < SPLIT)) {
    const outcome = processPollMessage(JSON.stringify(poll), product.rules, (name) => product.registry.resolve(name));
    if (outcome.kind === 'rows') rows.push(outcome.rows);
  }
  sink.write(rows);
  await sink.flush();
  await writer.close();
  await rebuildPredictionModel(db.client, { nowMs: SPLIT, windowDays: 90 });
  const source = new ClickHousePredictionSource(db.client, { places, workdays });
  await source.refresh();
  expect(source.model()).not.toBeNull();

  // A shipment in transit with a prediction at its first poll after the split, delivered later.
  const byShipment = new Map<string, CarrierPoll[]>();
  for (const poll of polls.filter((p) => Date.parse(p.polled_at) >= SPLIT)) {
    const key = `${poll.carrier}:${poll.awb}`;
    byShipment.set(key, [...(byShipment.get(key) ?? []), poll]);
  }
  const stageOf = (poll: CarrierPoll) => {
    const r = normalizePoll(poll, product.rules);
    return r.kind === 'found' ? { stage: r.shipment.facts.stage, prediction: source.predictor.predictRecord(r.shipment.record, r.shipment.facts, 'live', Date.parse(poll.polled_at)) } : null;
  };
  const chosen = [...byShipment.values()].find((list) => {
    const first = stageOf(list[0]!);
    return list.length >= 3 && first?.stage === 'in_transit' && first.prediction !== null && stageOf(list.at(-1)!)?.stage === 'delivered';
  });
  expect(chosen).toBeDefined();
  const shipmentPolls = chosen!;
  const { carrier, awb } = shipmentPolls[0]!;
  const firstMs = Date.parse(shipmentPolls[0]!.polled_at);
  const promisedBy = addDays(istDayOf(firstMs), -1);

  // The watch, in Redis, promised for the day before the first poll: already missed.
  const redis = new Redis(await testRedisUrl());
  const namespace = `${testNamespace()}push:`;
  cleanups.push(async () => { await deleteUnder(redis, namespace); redis.disconnect(); });
  const kv = new RedisKv(redis, namespace);
  await new WatchStore(kv).create({
    keyPrefix: PREFIX, mode: 'live', carrier, awb: requireAwb(awb), record: null, polledMs: firstMs - HOUR_MS, terminal: false, nowMs: firstMs - HOUR_MS,
    promise: { promised_by: promisedBy },
  });

  // The push detector on a topic of its own; the shipment's polls (and a repeat of each) produced to it.
  const kafka = testKafka();
  const topic = `test.running-late.${RUN}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  cleanups.push(async () => { await admin.deleteTopics({ topics: [topic] }).catch(() => undefined); await admin.disconnect(); });
  const log = new CollectingLog();
  const detector = new ChangeDetector({ kv, events: log, lanes: { get: async () => null }, standing: EVERY_KEY_ACTIVE, clock: Date.now, predictor: source.predictor });
  const consumer = new PollChangeConsumer({ kafka, detector, rules: product.rules, resolveCarrier: (n) => product.registry.resolve(n), groupId: `late-${RUN}`, topic });
  await consumer.start();
  cleanups.push(() => consumer.stop());
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  await producer.send({
    topic,
    messages: shipmentPolls.flatMap((p) => [p, p]).map((p) => ({ key: `${p.carrier}:${p.awb}`, value: JSON.stringify(p), headers: { mode: 'live' } })),
  });

  const bodies = () => log.events.map((e) => JSON.parse(e.body) as { type: string; data: { tracking: TrackingRecord; promised_by?: string; on_time_probability?: number } });
  const deadline = Date.now() + 60_000;
  while (!bodies().some((b) => b.type === 'tracking.delivered') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  await detector.settled();
  const told = bodies();
  expect(told.at(-1)?.type).toBe('tracking.delivered');
  const late = told.filter((b) => b.type === 'tracking.running_late');
  expect(late).toHaveLength(1);
  expect(late[0]!.data).toMatchObject({ promised_by: promisedBy, on_time_probability: 0 });
  // Every record of the watch that has a prediction carries the promise; the delivered one has none.
  const predicted = told.filter((b) => b.data.tracking.insights.prediction !== null);
  expect(predicted.length).toBeGreaterThan(0);
  for (const b of predicted) expect(b.data.tracking.insights.prediction!.promise).toEqual({ promised_by: promisedBy, on_time_probability: 0 });
  expect(told.indexOf(late[0]!)).toBeLessThan(told.length - 1);
}, 240_000);
