/**
 * Paying on the real Redis (one server and the Redis Cluster): the whole suite, and one payment's
 * webhook delivered many times at once to two API instances sharing the keys renews the key once.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../lib/billing/index.ts';
import { TEST_CLICKHOUSE_URL, createTestDatabase, rowsOf, type TestDatabase } from '../../../lib/clickhouse/testutil/database.ts';
import { paymentLinkPaidEvent, startGatewaySandbox, type RunningGateway } from '../../../lib/sandbox/gateway.ts';
import { ErrorBodySchema } from '../../../lib/schemas/index.ts';
import { billingSuite, deliver } from '../testutil/billing.suite.ts';
import { MINUTE_MS, startApiHarness, type ApiHarness } from '../testutil/harness.ts';

billingSuite('redis');
billingSuite('redis-cluster');

describe.each(['redis', 'redis-cluster'] as const)('one payment delivered at once to two API instances (%s)', (store) => {
  let first: ApiHarness;
  let second: ApiHarness;
  let gateway: RunningGateway;
  const bases: string[] = [];

  beforeAll(async () => {
    gateway = await startGatewaySandbox();
    first = await startApiHarness({ store, paymentSandbox: gateway });
    second = await startApiHarness({ store, paymentSandbox: gateway, namespace: first.namespace });
    bases.push(await first.listen(), await second.listen());
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await gateway?.close();
  });

  it('40 concurrent deliveries alternating between them: one renewal, one payment, one receipt', async () => {
    const created = await first.createKey({ plan: 'trial' });
    first.clock.advance(MINUTE_MS);
    // Instances never agree to the millisecond: the second runs a second ahead.
    second.clock.advance(MINUTE_MS + 1000);
    const body = JSON.stringify(paymentLinkPaidEvent({
      id: 'plink_twice000001', amount: 99_900, currency: 'INR', reference_id: 'rn_concurrentconcurren', description: 'growth',
      notes: { key_prefix: created.key_prefix, plan: 'growth' },
    }, 'pay_twice0000001', Math.floor(first.clock.now() / 1000)));
    const signature = signWebhook(body, gateway.webhookSecret);

    const answers = await Promise.all(Array.from({ length: 40 }, async (_, i) => {
      const res = await deliver(bases[i % 2]!, body, signature);
      const json = await res.json() as { outcome?: string };
      return res.status === 409 ? `409 ${ErrorBodySchema.parse(json).error.code}` : `${res.status} ${json.outcome}`;
    }));
    expect(answers.filter((a) => a === '200 applied')).toHaveLength(1);
    expect(answers.filter((a) => a !== '200 applied' && a !== '200 duplicate' && a !== '409 payment_in_progress')).toEqual([]);
    // The gateway delivers again what was answered 409: by then the payment is settled.
    for (const base of bases) expect(await (await deliver(base, body, signature)).json()).toEqual({ received: true, outcome: 'duplicate' });

    for (const h of [first, second]) {
      const view = (await h.admin('GET', `/admin/keys/${created.key_prefix}`)).json() as { plan: string; period: { lookups_used: number } };
      expect(view).toMatchObject({ plan: 'growth', period: { lookups_used: 0 } });
      expect((await h.admin('GET', `/admin/payments?key=${created.key_prefix}`)).json()).toMatchObject({ payments: [{ id: 'pay_twice0000001', applied: true }] });
    }
    // One receipt in all (no SMTP_URL: each instance's outbox under its DATA_DIR).
    const outboxes = await Promise.all([first, second].map(async (h) => (await readdir(join(h.dataDir, 'outbox')).catch(() => [])).filter((f) => f.endsWith('.eml'))));
    expect(outboxes.flat()).toHaveLength(1);
  });
});

describe('with ClickHouse: a settled payment is also a row of the payments table', () => {
  let db: TestDatabase;
  let api: ApiHarness;
  let gateway: RunningGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    gateway = await startGatewaySandbox();
    api = await startApiHarness({ store: 'redis', paymentSandbox: gateway, env: { CLICKHOUSE_URL: TEST_CLICKHOUSE_URL }, clickhouseDatabase: db.target.database });
  });
  afterAll(async () => {
    await api?.close();
    await gateway?.close();
    await db?.drop();
  });

  it('applied, with the key prefix, plan and amount in paise', async () => {
    const created = await api.createKey({ plan: 'starter' });
    const body = JSON.stringify(paymentLinkPaidEvent({
      id: 'plink_chrow00001', amount: 39_900, currency: 'INR', reference_id: 'rn_clickhouseclickhou', description: 'starter',
      notes: { key_prefix: created.key_prefix, plan: 'starter' },
    }, 'pay_chrow000001', Math.floor(api.clock.now() / 1000)));
    const res = await api.app.inject({
      method: 'POST', url: '/billing/razorpay/webhook', payload: body,
      headers: { 'content-type': 'application/json', 'x-razorpay-signature': signWebhook(body, gateway.webhookSecret) },
    });
    expect(res.json()).toEqual({ received: true, outcome: 'applied' });
    expect(await rowsOf(db.client, 'SELECT payment_id, key_prefix, plan, amount_paise, applied FROM payments FINAL')).toEqual([
      { payment_id: 'pay_chrow000001', key_prefix: created.key_prefix, plan: 'starter', amount_paise: '39900', applied: 1 },
    ]);
  });
});
