/**
 * The analyzer under SIGKILL (issue 29): a process killed between storing an analysis and
 * scheduling it, or in the middle of its run holding its lease; a new runner on the same store (the
 * restart) completes it within 10 s, each shipment counted once and, mid-run, only the chunks
 * without results looked up again. The killed process is lib/analyzer/testutil/crash-child.ts.
 * Run on the embedded store (crash.test.ts) and Redis (crash.services.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LaneBook } from '../../lanes/index.ts';
import { startChildApp } from '../../testutil/child-app.ts';
import type { Kv } from '../../kv/index.ts';
import { InProcessEventLog } from '../../push/index.ts';
import { Analyzer } from '../analyzer.ts';
import { missingShipment } from '../shipment.ts';
import { CRASH_PLANS, crashRecord, type CrashChildOptions } from './crash-setup.ts';

export interface CrashStoreFactory {
  name: string;
  /** A store for one test: what the child is told to open, and the restarted runner's handle on it. */
  create(): Promise<{ child: CrashChildOptions['store']; open(): Kv; cleanup(): Promise<void> }>;
}

/** The bound: the analysis completes within 10 s of the restart. */
const RESTART_BOUND_MS = 10_000;

export function crashSuite(factory: CrashStoreFactory): void {
  describe(`analyzer crash recovery (${factory.name})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    it.each(['accepted', 'mid-run'] as const)('SIGKILL %s, then a restart: the analysis completes within 10 s, counted once', { timeout: 120_000 }, async (phase) => {
      const store = await factory.create();
      cleanups.push(store.cleanup);
      const prefix = `trk_test_K${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`;
      const child = await startChildApp('lib/analyzer/testutil/crash-child.ts', { store: store.child, phase, prefix } satisfies CrashChildOptions, {});
      const id = child.readyWith;
      expect((await child.exited).signal, child.stderr()).toBe('SIGKILL');

      const looked = new Set<string>();
      const analyzer = new Analyzer({
        kv: store.open(), tracking: { lookup: async () => ({ kind: 'not_found' }), readCache: async () => null }, network: new LaneBook(), plans: CRASH_PLANS,
        events: new InProcessEventLog(async () => {}), clock: Date.now, runner: { idleMs: 100 },
        lookup: async (s) => { looked.add(s.awb); return missingShipment(s, 'delhivery', 'not_found', null); },
      });
      cleanups.push(async () => { await analyzer.stop(); await analyzer.store.kv.close(); });
      const before = (await analyzer.store.get(prefix, id))!;
      if (phase === 'accepted') {
        // Stored and counted, never scheduled due now: before the fix it stayed queued for good.
        expect(before).toMatchObject({ status: 'queued', done: 0 });
      } else {
        // Killed holding the lease: before the fix, nothing happened until its 2 minutes lapsed.
        expect(before.status).toBe('running');
        expect(before.done).toBeGreaterThanOrEqual(200);
        expect(before.done).toBeLessThan(450);
      }

      const restarted = Date.now();
      analyzer.start();
      for (;;) {
        const doc = (await analyzer.store.get(prefix, id))!;
        if (doc.status === 'completed') break;
        expect(doc.status).not.toBe('failed');
        expect(Date.now() - restarted, `not completed ${RESTART_BOUND_MS} ms after the restart: ${doc.status}, ${doc.done} done`).toBeLessThan(RESTART_BOUND_MS);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(Date.now() - restarted).toBeLessThan(RESTART_BOUND_MS);
      const doc = (await analyzer.store.get(prefix, id))!;
      expect(doc.report!.totals).toMatchObject({ shipments: 450, not_found: 450 });
      expect(doc.done).toBe(450);
      // Only what had no results was looked up after the restart; the allowance counted once.
      expect(looked.size).toBe(450 - before.done);
      expect(await analyzer.store.used(prefix, crashRecord(prefix).period_start)).toBe(450);
    });
  });
}
