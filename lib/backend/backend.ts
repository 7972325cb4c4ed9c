/**
 * Where the API's state lives, decided once: Redis (REDIS_URL; shared by every process) or the
 * embedded engine under DATA_DIR (one process; lib/kv's journal). Each store keeps its interface and
 * both of its implementations in its own folder (the Redis ones with their scripts); this is the one
 * place that picks between them, so an app asks for a store and never for a backend.
 */
import { join } from 'node:path';
import { EmbeddedAccessStore, RedisAccessStore, embeddedAccessDir, type AccessStore } from '../access/index.ts';
import { EmbeddedPaymentStore, RedisPaymentStore, embeddedPaymentsDir, type PaymentStore } from '../billing/index.ts';
import { createMemoryCache, createRedisCache, embeddedRecordsDir, type TrackingCache } from '../cache/index.ts';
import type { Plans } from '../config/index.ts';
import { EmbeddedIdempotencyStore, RedisIdempotencyStore, embeddedIdempotencyDir, type IdempotencyStore } from '../idempotency/index.ts';
import { EmbeddedKv, RedisKv, type Kv } from '../kv/index.ts';
import { connectRedis, type RedisClient } from '../redis/index.ts';
import { EmbeddedThrottle, RedisThrottle, type AddressThrottle } from '../throttle/index.ts';

export interface BackendOptions {
  /** Redis, or a Redis Cluster (`redis+cluster://`); unset: the embedded engine under `dataDir`. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key (`trk:`); tests set their own so runs sharing one Redis never meet. */
  namespace: string;
  dataDir: string;
  clock: () => number;
}

/** Each method opens a store: once per process (an embedded store owns its directory). */
export interface Backend {
  readonly kind: 'redis' | 'embedded';
  access(plans: Plans): AccessStore;
  throttle(): AddressThrottle;
  idempotency(): IdempotencyStore;
  payments(): PaymentStore;
  /** A key-value store named `name`: Redis keys under `<namespace><name>:`, or the journal in `<dataDir>/<name>/`. */
  kv(name: string): Kv;
  /** The tracking cache: Redis, or in process bounded by `maxBytes` with delivered records also on disk. */
  cache(options: { maxBytes: number; onError: (err: unknown) => void }): TrackingCache;
  /** What a readiness probe checks besides the stores (Redis answers PING). */
  readonly readiness: { name: string; check(): Promise<void> }[];
  /** Lets go of the connection; the stores are closed by their owners first. */
  close(): Promise<void>;
}

export function openBackend(options: BackendOptions): Backend {
  return options.redisUrl ? redisBackend(options.redisUrl, options.namespace) : embeddedBackend(options.dataDir, options.clock);
}

function redisBackend(url: string, ns: string): Backend {
  // One connection for every store, auto-pipelined. The access store and the cache each send the
  // lookups of one event-loop turn as one script call (lib/access/README.md). One Redis or a Redis
  // Cluster: every store keeps each call to one slot.
  const redis: RedisClient = connectRedis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableAutoPipelining: true });
  return {
    kind: 'redis',
    access: (plans) => new RedisAccessStore({ plans, redis, namespace: `${ns}access:` }),
    throttle: () => new RedisThrottle(redis, `${ns}throttle:`),
    idempotency: () => new RedisIdempotencyStore(redis, `${ns}idempotency:`),
    payments: () => new RedisPaymentStore(redis, `${ns}payments:`),
    kv: (name) => new RedisKv(redis, `${ns}${name}:`),
    cache: () => createRedisCache(redis, `${ns}cache:`),
    readiness: [{ name: 'redis', check: async () => { await redis.ping(); } }],
    async close() { redis.disconnect(); },
  };
}

function embeddedBackend(dataDir: string, clock: () => number): Backend {
  return {
    kind: 'embedded',
    access: (plans) => new EmbeddedAccessStore({ plans, dir: embeddedAccessDir(dataDir) }),
    throttle: () => new EmbeddedThrottle(dataDir),
    idempotency: () => new EmbeddedIdempotencyStore(embeddedIdempotencyDir(dataDir), clock),
    payments: () => new EmbeddedPaymentStore(embeddedPaymentsDir(dataDir)),
    kv: (name) => new EmbeddedKv(join(dataDir, name), clock),
    // Bounded by bytes; delivered records also on disk, so evicting one never costs a carrier poll.
    cache: ({ maxBytes, onError }) => createMemoryCache({ maxBytes, dir: embeddedRecordsDir(dataDir), onError }),
    readiness: [],
    async close() {},
  };
}
