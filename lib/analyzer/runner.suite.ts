/**
 * The runner over the state store, with two runners (as two API instances) sharing one store:
 * each analysis is run by one of them at a time, every shipment looked up exactly once, each
 * completed once. Run on the embedded store (runner.test.ts) and Redis (runner.services.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../access/index.ts';
import { LaneBook } from '../lanes/index.ts';
import type { PushKv, WebhookEvent } from '../webhooks/index.ts';
import { InProcessEventLog } from '../webhooks/index.ts';
import { Analyzer } from './analyzer.ts';
import { missingShipment } from './shipment.ts';
import type { ShipmentInput } from './types.ts';

export interface StoreFactory {
  name: string;
  /** Two handles on one store (two processes' connections where the store allows). */
  open(): Promise<{ kvs: [PushKv, PushKv]; cleanup(): Promise<void> }>;
}

const PLANS = {
  trial: { price_inr: 0, validity_days: 14, lookups: 100, burst_per_second: 5, daily_quota: 100 },
  starter: { price_inr: 399, validity_days: 30, lookups: 1500, burst_per_second: 5, daily_quota: 300 },
  growth: { price_inr: 999, validity_days: 30, lookups: 4000, burst_per_second: 10, daily_quota: 800 },
  business: { price_inr: 3000, validity_days: 30, lookups: 12000, burst_per_second: 20, daily_quota: 2400 },
};

const record = (prefix: string): KeyRecord => ({
  prefix, hash: '0'.repeat(64), mode: 'test', email: 'x@example.com', plan: 'business', status: 'active',
  period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z', lookups_limit: 12000, daily_quota: 2400,
  burst_per_second: 20, created_at: '2026-11-01T00:00:00.000Z', renewed_at: null, notices_sent: {},
});

const input = (awb: string): ShipmentInput => ({ awb, carrier: 'delhivery', candidates: [], order_id: null, payment_mode: null, order_value_inr: null, promised_by_ms: null });

export function runnerSuite(factory: StoreFactory): void {
  describe(`analysis runner (${factory.name})`, () => {
    let cleanup: () => Promise<void> = async () => {};
    const analyzers: Analyzer[] = [];
    afterEach(async () => {
      await Promise.all(analyzers.splice(0).map((a) => a.stop()));
      await cleanup();
    });

    it('two runners on one store: every shipment looked up once, every analysis completed once', async () => {
      const opened = await factory.open();
      cleanup = opened.cleanup;
      const lookups = new Map<string, number>();
      const events: WebhookEvent[] = [];
      const ran = [0, 0];
      for (const [i, kv] of opened.kvs.entries()) {
        analyzers.push(new Analyzer({
          kv, tracking: { lookup: async () => ({ kind: 'not_found' }), readCache: async () => null }, network: new LaneBook(), plans: PLANS,
          events: new InProcessEventLog(async (batch) => { events.push(...batch); }), clock: Date.now,
          runner: { idleMs: 10 },
          lookup: async (s) => {
            lookups.set(s.awb, (lookups.get(s.awb) ?? 0) + 1);
            ran[i]!++;
            await new Promise((resolve) => setTimeout(resolve, 1));
            return missingShipment(s, 'delhivery', 'not_found', null);
          },
        }));
      }
      const prefix = `trk_test_R${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`;
      const ids: string[] = [];
      for (let a = 0; a < 4; a++) {
        const shipments = Array.from({ length: 450 }, (_, i) => input(`A${a}N${i}`));
        const accepted = await analyzers[a % 2]!.accept(record(prefix), null, shipments, [], 0);
        expect(accepted.ok).toBe(true);
        if (accepted.ok) ids.push(accepted.doc.id);
      }
      for (const a of analyzers) a.start();
      const store = analyzers[0]!.store;
      for (;;) {
        const docs = await Promise.all(ids.map((id) => store.get(prefix, id)));
        if (docs.every((d) => d?.status === 'completed')) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(lookups.size).toBe(4 * 450);
      expect([...lookups.values()].every((n) => n === 1)).toBe(true);
      expect(events.map((e) => e.type)).toEqual(['analysis.completed', 'analysis.completed', 'analysis.completed', 'analysis.completed']);
      expect(events.map((e) => e.sequence).sort()).toEqual([1, 2, 3, 4]);
      expect(new Set(events.map((e) => e.id)).size).toBe(4);
      for (const id of ids) {
        const doc = (await store.get(prefix, id))!;
        expect(doc.report!.totals).toMatchObject({ shipments: 450, not_found: 450 });
        expect(doc.done).toBe(450);
      }
      expect(ran[0]! + ran[1]!).toBe(1800);
      expect(await store.used(prefix, record(prefix).period_start)).toBe(1800);
    });
  });
}
