/** `npm start` with the three services set: the distributed mode in one process (start.test.ts: the embedded default). */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../lib/access/testutil/stores.ts';
import { TEST_CLICKHOUSE_URL } from '../../lib/clickhouse/testutil/database.ts';
import { TEST_BROKERS } from '../../lib/kafka/testutil/broker.ts';
import { TrackingRecordSchema } from '../../lib/schemas/index.ts';
import { cleanUp, start, stop } from './testutil/harness.ts';

async function newKey(base: string, token: string): Promise<string> {
  const res = await fetch(`${base}/admin/keys`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'starter', mode: 'test', email: 'start-services@example.com' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

describe('npm start (distributed mode)', () => {
  let dataDir: string | undefined;

  afterAll(() => cleanUp(dataDir));

  it('with REDIS_URL, KAFKA_BROKERS and CLICKHOUSE_URL: says so, and a lookup reaches ClickHouse with no other command run', { timeout: 300_000 }, async () => {
    const services = {
      REDIS_URL: await testRedisUrl(),
      KAFKA_BROKERS: TEST_BROKERS,
      // A database of this run's own (the path of the URL names it; migrations create it).
      CLICKHOUSE_URL: `${TEST_CLICKHOUSE_URL}/tracking_test_start_${Date.now().toString(36)}`,
    };
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-'));
    const started = await start(dataDir, services);
    expect(started.output()).toMatch(/mode:\s+distributed: Redis, Kafka and ClickHouse/);
    // A number of this run's own: a final record stays cached in the shared Redis across runs, and a
    // cache hit makes no poll (the sandbox reads lane and scenario from the last four digits).
    const awb = `${String(Date.now()).slice(-9)}0104`;
    // The shared Redis keeps the trial key of an earlier run of this test (one per store): then a key
    // of this run's own, made with the admin token this start generated and printed.
    const key = started.trialKey ?? await newKey(started.base, /^\s*ADMIN_TOKEN:\s+(\S+)\s+\(generated/m.exec(started.output())![1]!);
    const res = await fetch(`${started.base}/v1/track/delhivery/${awb}`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    const record = TrackingRecordSchema.parse(await res.json());
    const database = new URL(services.CLICKHOUSE_URL).pathname.slice(1);
    const count = async (table: string) => {
      const query = `SELECT count() FROM ${database}.${table} WHERE awb = '${record.awb}' FORMAT TabSeparated`;
      const answer = await fetch(`${new URL(services.CLICKHOUSE_URL).origin}/?query=${encodeURIComponent(query)}`);
      return Number((await answer.text()).trim());
    };
    const deadline = Date.now() + 60_000;
    while ((await count('shipments')) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await count('carrier_polls')).toBeGreaterThan(0);
    expect(await count('events')).toBe(record.events.length);
    expect(await count('shipments')).toBeGreaterThan(0);
    // One backend for the four apps: /metrics shows each of them, /readyz checks each service.
    const metrics = await (await fetch(`${started.base}/metrics`)).text();
    for (const family of ['tracking_lookups_total', 'normalizer_polls_consumed_total', 'normalizer_rows_written_total', 'poller_ticks_total', 'webhook_delivery_attempts_total']) {
      expect(metrics).toContain(`# TYPE ${family} `);
    }
    const ready = (await (await fetch(`${started.base}/readyz`)).json()) as { checks: { name: string; ok: boolean }[] };
    expect(ready.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['redis', 'kafka', 'clickhouse']));
    expect(await stop(started)).toEqual({ code: 0, signal: null });
    // A healthy start (and its first lookup) logs no line at warn or above and Node warns of nothing.
    const loud = started.output().split('\n').filter((line) => (line.startsWith('{') ? (JSON.parse(line) as { level: number }).level >= 40 : /Warning|\berror\b/i.test(line)));
    expect(loud, started.output()).toEqual([]);
    await fetch(`${new URL(services.CLICKHOUSE_URL).origin}/?query=${encodeURIComponent(`DROP DATABASE IF EXISTS ${database}`)}`, { method: 'POST' });
  });
});
