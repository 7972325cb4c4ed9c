/**
 * A Redis Cluster master killed (SIGKILL) during lookups and restarted from its AOF: every lookup
 * the store granted is still counted afterwards. Runs on a scratch cluster of its own (own ports,
 * own files), never on the shared one. Lookups refused or failed while the node is down may or may
 * not have been counted; granted ones must have been.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScratchCluster, type ScratchCluster } from '../redis/testutil/cluster.ts';
import type { KeyRecord } from './record.ts';
import { RedisAccessStore } from './redis-store.ts';
import { plans, testNamespace } from './testutil/stores.ts';

const KEYS = 12;
const WORKERS = 8;

/**
 * Calls outside the kill window, retried while the cluster says CLUSTERDOWN: on a loaded machine a
 * node that answers its peers late (node timeout 2 s) is marked failing for a moment, at any time.
 * What the test checks (granted lookups counted) does not depend on these calls' timing.
 */
async function whileClusterDown<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= 50 || !/CLUSTERDOWN/.test((err as Error).message)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

let cluster: ScratchCluster;
beforeAll(async () => {
  cluster = await startScratchCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('a Redis Cluster master killed and restarted from its AOF during lookups', () => {
  it('loses no granted lookup', async () => {
    const namespace = testNamespace();
    const store = new RedisAccessStore({ plans, redis: cluster.url, namespace });
    const records: KeyRecord[] = [];
    for (let i = 0; i < KEYS; i++) {
      const { record } = await whileClusterDown(() => store.createKey({
        plan: 'business', mode: 'live', email: `k${i}@example.in`,
        lookups_limit: 1_000_000, daily_quota: 1_000_000, burst_per_second: 1_000_000,
      }, new Date()));
      records.push(record);
    }
    // The killed master serves some of the keys (their counts then live only in its AOF).
    const owners = await Promise.all(records.map((r) => cluster.masterOf(`${namespace}usage:{${r.hash}}`)));
    const victim = owners[0]!;
    const onVictim = records.filter((_, i) => owners[i] === victim);

    const granted = new Map<string, number>(records.map((r) => [r.prefix, 0]));
    const tally = { granted: 0, failed: 0 };
    let running = true;
    const worker = async (w: number) => {
      for (let n = w; running; n += WORKERS) {
        const record = records[n % KEYS]!;
        try {
          const result = await store.consume(record, new Date());
          if (result.ok) {
            granted.set(record.prefix, granted.get(record.prefix)! + 1);
            tally.granted++;
          } else {
            tally.failed++;
          }
        } catch {
          tally.failed++;
        }
      }
    };
    const waitFor = async (check: () => boolean) => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
    try {
      await waitFor(() => tally.granted >= 300);
      cluster.kill(victim);
      const grantedAtKill = tally.granted;
      // The cluster notices (node timeout) and refuses or fails lookups until the node is back.
      await waitFor(() => tally.failed >= 1);
      await cluster.restart(victim);
      await waitFor(() => tally.granted >= grantedAtKill + 300);
    } finally {
      running = false;
      await Promise.all(workers);
    }

    const now = new Date();
    const usage = await Promise.all(records.map(async (r) => ({
      prefix: r.prefix, granted: granted.get(r.prefix)!, used: (await whileClusterDown(() => store.usage(r.prefix, now))).lookupsUsed,
    })));
    // Every granted lookup is counted (a failed one may have been counted too: never fewer).
    for (const { prefix, granted: answered, used } of usage) expect(used, prefix).toBeGreaterThanOrEqual(answered);
    // ...and the check had something to check on the killed node.
    expect(onVictim.length).toBeGreaterThan(0);
    expect(onVictim.every((r) => granted.get(r.prefix)! > 0)).toBe(true);
    expect(tally.failed).toBeGreaterThan(0);
    await store.close();
  }, 120_000);
});
