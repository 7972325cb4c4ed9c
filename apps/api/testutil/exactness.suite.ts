/**
 * Exact metering under concurrency (decisions.md: N parallel requests against R remaining serve
 * exactly min(N, R)), over real HTTP with 500 requests fired at once (over 100 sockets), on both access stores:
 * the embedded one and the real Redis (REDIS_URL). The clock is frozen, so all 500 fall in one
 * burst window and one UTC day; the consignments are cached before, so no carrier is involved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { ErrorBodySchema, TrackingRecordSchema, type ErrorCode } from '../../../lib/schemas/index.ts';
import { awbFor, expectRecord, startApiHarness, type ApiHarness, type CreateKeyBody , type StoreKind } from './harness.ts';

const PARALLEL = 500;
const CONNECTIONS = 100;
const FOUND = awbFor('delhivery', 2);
const NOT_FOUND = awbFor('delhivery', 0);

interface Outcome {
  status: number;
  code: ErrorCode | null;
  retryAfter: string | undefined;
}

/** Run against the embedded store by exactness.test.ts and against Redis by exactness.services.test.ts. */
export function exactnessSuite(store: StoreKind): void {
  describe(`exact metering over HTTP, ${store} store`, () => {
    let h: ApiHarness;
    let base: string;
    // Enough sockets that many requests are inside the server at the same time, kept open between runs.
    const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });

    beforeAll(async () => {
      h = await startApiHarness({ store });
      base = await h.listen();
      const warm = await h.createKey();
      expectRecord(await h.track(warm.key, 'delhivery', FOUND));
      expect((await h.track(warm.key, 'delhivery', NOT_FOUND)).statusCode).toBe(404);
    });
    afterAll(async () => {
      await agent.close();
      await h.close();
    });

    /**
     * PARALLEL lookups fired at once, half of a found and half of a not-found consignment. Bodies are
     * checked after the last answer, so the checks do not slow the server they share a thread with.
     */
    async function fire(key: string): Promise<Outcome[]> {
      const answers = await Promise.all(Array.from({ length: PARALLEL }, async (_, i) => {
        const res = await request(`${base}/v1/track/delhivery/${i % 2 ? NOT_FOUND : FOUND}`, { headers: { 'x-api-key': key }, dispatcher: agent });
        return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
      }));
      return answers.map(({ status, headers, body }) => {
        if (status === 200) {
          const parsed = TrackingRecordSchema.safeParse(JSON.parse(body));
          expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
          return { status, code: null, retryAfter: undefined };
        }
        const parsed = ErrorBodySchema.safeParse(JSON.parse(body));
        expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
        expect(headers['x-request-id']).toBe(parsed.data!.error.request_id);
        const retryAfter = headers['retry-after'];
        return { status, code: parsed.data!.error.code, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined };
      });
    }

    function tally(outcomes: Outcome[]): Record<string, number> {
      const counts: Record<string, number> = {};
      for (const o of outcomes) {
        const name = o.status === 200 ? 'found' : (o.code ?? String(o.status));
        counts[name] = (counts[name] ?? 0) + 1;
      }
      return counts;
    }

    /**
     * Opens every socket before a run. Redis burst counters expire 2 s (real time) after their last
     * count while the frozen clock keeps naming the same second, so a run must not be slowed by
     * connection setup: warm, 500 lookups take well under a second here.
     */
    async function warm(): Promise<void> {
      await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
        const res = await request(`${base}/healthz`, { dispatcher: agent });
        await res.body.text();
      }));
    }

    async function scenario(limits: Partial<CreateKeyBody>, refusal: ErrorCode, served: number) {
      const k = await h.createKey(limits);
      await warm();
      const outcomes = await fire(k.key);
      const counts = tally(outcomes);
      expect((counts.found ?? 0) + (counts.shipment_not_found ?? 0)).toBe(served);
      expect(counts[refusal]).toBe(PARALLEL - served);
      expect(Object.keys(counts).sort()).toEqual(['found', refusal, 'shipment_not_found'].sort());
      return { key: k.key, outcomes };
    }

    it('500 parallel lookups against 50 left serve exactly 50 and refuse 450 with plan_quota_exceeded', async () => {
      const { key, outcomes } = await scenario({ lookups_limit: 50, burst_per_second: 10_000, daily_quota: 10_000 }, 'plan_quota_exceeded', 50);
      expect(outcomes.filter((o) => o.code === 'plan_quota_exceeded').every((o) => o.retryAfter === undefined)).toBe(true);
      expect((await h.usage(key)).period).toMatchObject({ lookups_used: 50, lookups_limit: 50, lookups_remaining: 0 });
    });

    it('a burst of 20 per second serves exactly 20 of 500 in one second', async () => {
      const { key, outcomes } = await scenario({ burst_per_second: 20, daily_quota: 10_000, lookups_limit: 10_000 }, 'rate_limit_exceeded', 20);
      expect(outcomes.filter((o) => o.code === 'rate_limit_exceeded').every((o) => o.retryAfter === '1')).toBe(true);
      expect((await h.usage(key)).period).toMatchObject({ lookups_used: 20, lookups_remaining: 10_000 - 20 });
    });

    it('a daily quota of 30 serves exactly 30 of 500', async () => {
      const { key, outcomes } = await scenario({ daily_quota: 30, burst_per_second: 10_000, lookups_limit: 10_000 }, 'daily_quota_exceeded', 30);
      const midnight = Math.ceil((Date.parse(h.clock.iso().slice(0, 10)) + 86_400_000 - h.clock.now()) / 1000);
      expect(outcomes.filter((o) => o.code === 'daily_quota_exceeded').every((o) => o.retryAfter === String(midnight))).toBe(true);
      expect((await h.usage(key)).period).toMatchObject({ lookups_used: 30, lookups_remaining: 10_000 - 30 });
    });
  });
}
