/**
 * A process killed mid-stream, for the key-value store's crash test (kv.suite.ts, both backends):
 * opens the store named in argv[2] (JSON, `KvChildStore`) and, for n = 0, 1, 2…, writes one
 * `transact` step (documents `{c}a<n>` and `{c}b<n>`, member n of `{c}set`) then increments
 * `{c}count`. After the 30th round it prints `ready 30` and goes on until the test kills it.
 */
import { connectRedis } from '../../redis/index.ts';
import { EmbeddedKv } from '../embedded.ts';
import type { Kv } from '../kv.ts';
import { RedisKv } from '../redis.ts';

export type KvChildStore = { kind: 'embedded'; dir: string } | { kind: 'redis'; url: string; namespace: string };

const store = JSON.parse(process.argv[2] ?? '{}') as KvChildStore;
const kv: Kv = store.kind === 'embedded' ? new EmbeddedKv(store.dir) : new RedisKv(connectRedis(store.url), store.namespace);
for (let n = 0; ; n++) {
  await kv.transact([], () => ({
    writes: [{ key: `{c}a${n}`, value: n }, { key: `{c}b${n}`, value: n }], setAdds: [{ key: '{c}set', member: String(n) }], result: undefined,
  }));
  await kv.increment('{c}count', 600_000);
  if (n + 1 === 30) process.stdout.write('ready 30\n');
}
