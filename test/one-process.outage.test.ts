/**
 * The one-process distributed start (`npm start` with REDIS_URL, KAFKA_BROKERS and CLICKHOUSE_URL)
 * through a Kafka outage, under lookups and its own poller's load: it STOPS the shared Kafka for
 * 30 s, so it runs in the outage pass, alone (scripts/test.sh). Then a second, shorter outage ends
 * with a SIGKILL as Kafka comes back, in the middle of the spool's drain, and a restart on the same
 * DATA_DIR. Each time: every lookup answered, /readyz says "degraded" naming Kafka while it is away
 * and "ready" after, the spool drains, and every poll is on the raw-poll topic exactly once.
 */
import { randomInt } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUp, start, type Started } from '../apps/embedded/testutil/harness.ts';
import { testRedisUrl } from '../lib/access/testutil/stores.ts';
import { TEST_CLICKHOUSE_URL } from '../lib/clickhouse/testutil/database.ts';
import { readPollWindow } from '../lib/kafka/read-window.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import * as kafkaService from './services/kafka.ts';

const OUTAGE_MS = 30_000;
const ADMIN_TOKEN = `outage-${'x'.repeat(32)}`;
const RUN = String(randomInt(0, 1_000_000)).padStart(6, '0');
let sequence = 0;
/** A delhivery sandbox number of this run: in transit (02) on lane 01, so the poller keeps polling it. */
const uniqueAwb = () => `${RUN}${String(sequence++).padStart(5, '0')}0102`;

let dataDir: string | undefined;
let kafkaDown = false;
afterAll(async () => {
  if (kafkaDown) await kafkaService.start();
  await cleanUp(dataDir);
}, 120_000);

interface Readiness {
  status: string;
  checks: { name: string; ok: boolean }[];
}

/** Lookups, two at a time, and a /readyz probe a second, until stopped: what a shop's traffic and a load balancer do. */
function load(base: string, key: string) {
  const answered: string[] = [];
  const unanswered: string[] = [];
  const probes: { at: number; kafkaOk: boolean | undefined; status: string }[] = [];
  let running = true;
  const lookups = async () => {
    while (running) {
      const awb = uniqueAwb();
      const res = await fetch(`${base}/v1/track/delhivery/${awb}`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(10_000) })
        .catch((err: unknown) => ({ status: String(err) }));
      if (res.status === 200) answered.push(awb);
      else unanswered.push(`${awb}: ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const probing = async () => {
    while (running) {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
      const body = res ? ((await res.json()) as Readiness) : { status: 'no answer', checks: [] };
      probes.push({ at: Date.now(), status: body.status, kafkaOk: body.checks.find((c) => c.name === 'kafka')?.ok });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const loops = [lookups(), lookups(), probing()];
  return {
    answered, unanswered, probes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function metric(base: string, name: string): Promise<number | null> {
  const text = await fetch(`${base}/metrics`).then((r) => r.text()).catch(() => '');
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : null;
}

async function until(what: string, probe: () => Promise<boolean>, deadlineMs = 120_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Every message of this run's shipments on the raw-poll topic since `sinceMs`: poll_id → copies, and the sources seen. */
async function topicCopies(sinceMs: number) {
  const copies = new Map<string, number>();
  const awbs = new Set<string>();
  const sources = new Set<string>();
  await readPollWindow(testKafka(), { sinceMs }, (value) => {
    const poll = JSON.parse(value) as { poll_id: string; awb: string; source: string };
    if (!poll.awb.startsWith(RUN)) return;
    copies.set(poll.poll_id, (copies.get(poll.poll_id) ?? 0) + 1);
    awbs.add(poll.awb);
    sources.add(poll.source);
  });
  return { copies, awbs, sources };
}

async function businessKey(base: string): Promise<string> {
  const res = await fetch(`${base}/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'business', mode: 'test', email: 'outage@example.com', burst_per_second: 10_000, daily_quota: 1_000_000 }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

describe('npm start (distributed, one process) through a Kafka outage', () => {
  it('answers throughout, says it is degraded, drains its spool and puts every poll on the topic once; also after a kill mid-drain', async () => {
    expect(TEST_BROKERS).toBe(kafkaService.url());
    const sinceMs = Date.now() - 5_000;
    dataDir = await mkdtemp(join(tmpdir(), 'one-process-outage-'));
    const services = {
      REDIS_URL: await testRedisUrl(),
      KAFKA_BROKERS: TEST_BROKERS,
      CLICKHOUSE_URL: `${TEST_CLICKHOUSE_URL}/tracking_test_outage_${RUN}`,
      ADMIN_TOKEN,
      // Every shipment re-polled every 10 s: the poller's polls share the process's one bus.
      POLLER_INTERVAL_SECONDS: '10',
    };
    let app: Started = await start(dataDir, services);
    const key = await businessKey(app.base);
    let traffic = load(app.base, key);
    await new Promise((resolve) => setTimeout(resolve, 15_000));

    // 1. Kafka away for 30 s under load, then back: no kill.
    kafkaDown = true;
    await kafkaService.stop();
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const spooled = await metric(app.base, 'poll_spool_bytes');
    await kafkaService.start();
    kafkaDown = false;
    const startedAt = Date.now();
    await until('the spool drained', async () => (await metric(app.base, 'poll_spool_bytes')) === 0);
    await until('/readyz ready again', async () => traffic.probes.at(-1)?.status === 'ready');
    await traffic.stop();
    expect(traffic.unanswered).toEqual([]);
    expect(spooled).toBeGreaterThan(0);
    // Probes while Kafka was away (after the first seconds it takes to notice) said degraded, naming Kafka.
    const during = traffic.probes.filter((p) => p.at > stoppedAt + 5_000 && p.at < startedAt);
    expect(during.length).toBeGreaterThan(10);
    expect(during.every((p) => p.status === 'degraded' && p.kafkaOk === false)).toBe(true);
    const answeredBefore = traffic.answered;

    // 2. A shorter outage ended by a SIGKILL as Kafka returns (the spool's drain starting), then a restart.
    traffic = load(app.base, key);
    await kafkaService.stop();
    kafkaDown = true;
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS / 2));
    await kafkaService.start();
    kafkaDown = false;
    app.child.kill('SIGKILL');
    await app.exited;
    await traffic.stop();
    app = await start(dataDir, services);
    await until('the killed process\'s spool drained', async () => (await metric(app.base, 'poll_spool_bytes')) === 0);

    // Exactly once: no poll twice, and every shipment whose lookup was answered is there (a new
    // number always polls, and the poll is spooled before the answer).
    const { copies, awbs, sources } = await topicCopies(sinceMs);
    expect(copies.size).toBeGreaterThan(answeredBefore.length);
    expect([...copies.values()].filter((n) => n !== 1)).toEqual([]);
    expect([...answeredBefore, ...traffic.answered].filter((awb) => !awbs.has(awb))).toEqual([]);
    expect(sources).toEqual(new Set(['lookup', 'poller']));
  }, 600_000);
});
