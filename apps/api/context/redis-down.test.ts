/**
 * The API in Redis mode when Redis cannot be reached (nothing listens on its port): lookups and
 * usage answer 500 internal_error in the standard error body, without internals, and readiness
 * names Redis. The batched access step fails every lookup of its turn, and none hangs. The
 * connection error is logged once, not at every reconnection attempt.
 */
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { freePort } from '../../../lib/testutil/ports.ts';
import { expectError, startApiHarness, type ApiHarness } from '../testutil/harness.ts';

const KEY = `trk_test_${'A'.repeat(32)}`;

describe('Redis unreachable', () => {
  let h: ApiHarness;
  let stderr: MockInstance<typeof console.error>;
  beforeAll(async () => {
    stderr = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    h = await startApiHarness({ env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
  });
  afterAll(async () => {
    await h?.close();
    stderr.mockRestore();
  });

  it('answers concurrent lookups and usage 500 internal_error, without internals', { timeout: 30_000 }, async () => {
    const answers = await Promise.all([
      h.track(KEY, 'delhivery', '1234567890102'),
      h.track(KEY, 'bluedart', '10000000000002'),
      h.app.inject({ method: 'GET', url: '/v1/usage', headers: { 'x-api-key': KEY } }),
    ]);
    for (const res of answers) {
      const error = expectError(res, 500, 'internal_error');
      expect(error.message).not.toMatch(/redis|ECONNREFUSED|127\.0\.0\.1/i);
    }
  });

  it('reports Redis as not ready', { timeout: 30_000 }, async () => {
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('redis');
  });

  it('logs the connection error once per 10 s, not at every reconnection attempt', () => {
    const lines = stderr.mock.calls.map((args) => args.map(String).join(' '));
    expect(lines.filter((line) => line.startsWith('redis: connect ECONNREFUSED'))).toHaveLength(1);
    expect(lines.filter((line) => line.includes('Unhandled error event'))).toEqual([]);
  });
});
