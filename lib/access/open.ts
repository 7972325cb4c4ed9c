import type { Plans } from '../config/index.ts';
import { EmbeddedAccessStore, embeddedAccessDir } from './embedded-store.ts';
import { RedisAccessStore } from './redis-store.ts';
import type { AccessStore } from './store.ts';

export interface OpenAccessStoreOptions {
  plans: Plans;
  /** When set (distributed mode), keys and counters live in this Redis. */
  redisUrl?: string | undefined;
  /** Prefix of the Redis keys (default the store's own, `trk:access:`); apps pass `<their namespace>access:`. */
  redisNamespace?: string | undefined;
  /** Otherwise they live under `<dataDir>/access/` (the embedded default). */
  dataDir: string;
}

/** The store the environment asks for: Redis when REDIS_URL is set, the embedded one otherwise. */
export function openAccessStore(options: OpenAccessStoreOptions): AccessStore {
  if (options.redisUrl) return new RedisAccessStore({ plans: options.plans, redis: options.redisUrl, namespace: options.redisNamespace });
  return new EmbeddedAccessStore({ plans: options.plans, dir: embeddedAccessDir(options.dataDir) });
}
