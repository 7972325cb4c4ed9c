/** Operations with the Redis store (ops.test.ts has the rest). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';

describe('readiness with Redis', () => {
  let h: ApiHarness;
  beforeAll(async () => { h = await startApiHarness({ store: 'redis' }); });
  afterAll(() => h.close());

  it('checks the access store, Redis and the sandbox', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect((res.json() as { checks: { name: string }[] }).checks.map((c) => c.name)).toEqual(['access', 'redis', 'carrier-sandbox']);
  });
});
