import { afterEach, describe, expect, it } from 'vitest';
import { deleteUnder, keysUnder, plans, testNamespace, testRedisUrl } from '../access/testutil/stores.ts';
import { connectRedis, type RedisClient } from '../redis/index.ts';
import { openBackend, type Backend } from './backend.ts';

let admin: RedisClient;
let ns: string;
let backend: Backend;
afterEach(async () => {
  await backend.close();
  await deleteUnder(admin, ns);
  admin.disconnect();
});

describe('redis backend', () => {
  it('keeps every store under the namespace, one prefix each, and answers the readiness check', async () => {
    const url = await testRedisUrl();
    admin = connectRedis(url);
    ns = testNamespace();
    backend = openBackend({ redisUrl: url, namespace: ns, dataDir: '/nonexistent', clock: Date.now });
    expect(backend.kind).toBe('redis');
    const now = Date.now();
    await backend.access(plans).createKey({ plan: 'starter', mode: 'test', email: 'a@example.in' }, new Date(now));
    await backend.kv('push').set('{x}doc', { a: 1 });
    await backend.kv('analyses').set('{x}doc', { a: 2 });
    await backend.throttle().record({ name: 'trial', limit: 3, windowMs: 60_000 }, '203.0.113.7', now);
    await backend.idempotency().complete('scope', 'k', 'fp', { status: 200, body: '{}' }, now);
    await backend.payments().saveAttempt({ reference_id: 'rn_1', link_id: 'plink_1', short_url: 'http://x', key_prefix: 'trk_test_Ab3dE9x', plan: 'growth' });
    const prefixes = new Set((await keysUnder(admin, ns)).map((key) => key.slice(ns.length).split(':')[0]));
    expect([...prefixes].sort()).toEqual(['access', 'analyses', 'idempotency', 'payments', 'push', 'throttle']);
    for (const { check } of backend.readiness()) await check();
  });
});
