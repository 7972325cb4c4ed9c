import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { withoutRepeats, type LineLog } from '../logging/index.ts';
import { lazyModule } from '../lazy/lazy-module.ts';

/** ioredis, loaded at the first connection (lib/lazy/lazy-module.ts says why). */
const ioredis = lazyModule<typeof import('ioredis')>('ioredis');

/** One Redis server or a Redis Cluster: the commands the stores use exist on both. */
export type RedisClient = Redis | Cluster;

/** The scheme that names a cluster: `redis+cluster://[user:password@]host:port,host:port,...`. */
export const CLUSTER_SCHEME = 'redis+cluster:';

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: { host: string; port: number }[]; username?: string; password?: string };

/**
 * What a REDIS_URL names. A cluster is a URL of its own scheme listing some of its nodes (any one
 * that answers is enough; the client learns the others and the slot map from it), so one variable
 * keeps meaning one Redis deployment and nothing else has to agree with it.
 */
export function parseRedisUrl(url: string): RedisTarget {
  if (!url.startsWith(`${CLUSTER_SCHEME}//`)) return { kind: 'single', url };
  let rest = url.slice(CLUSTER_SCHEME.length + 2).replace(/\/.*$/, '');
  let username: string | undefined;
  let password: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const credentials = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = credentials.indexOf(':');
    username = decodeURIComponent(colon >= 0 ? credentials.slice(0, colon) : credentials) || undefined;
    password = colon >= 0 ? decodeURIComponent(credentials.slice(colon + 1)) : undefined;
  }
  const nodes = rest.split(',').filter(Boolean).map((node) => {
    const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(node.trim());
    if (!match) throw new Error(`REDIS_URL: cluster node '${node}' is not host:port (expected redis+cluster://host:port,host:port)`);
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) };
  });
  if (nodes.length === 0) throw new Error('REDIS_URL: redis+cluster:// names no node (expected redis+cluster://host:port,host:port)');
  return { kind: 'cluster', nodes, ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}

/**
 * A Redis connection (one server, or a cluster for a redis+cluster:// URL) whose connection errors
 * are logged, each distinct one at most once per 10 s. Without an 'error' listener ioredis prints
 * "Unhandled error event" and a stack trace at every reconnection attempt while Redis is down
 * (several a second). Commands still fail as ioredis decides (`maxRetriesPerRequest`), and it keeps
 * reconnecting.
 */
export function connectRedis(url: string, options: RedisOptions = {}, log: LineLog = (_level, message) => console.error(message)): RedisClient {
  const target = parseRedisUrl(url);
  const quiet = withoutRepeats(log);
  if (target.kind === 'single') {
    const redis = new (ioredis().Redis)(url, options);
    redis.on('error', (err: Error) => quiet('error', `redis: ${err.message}`));
    return redis;
  }
  // Connection-wide options live at the cluster's top level; the rest applies to each node.
  const { enableAutoPipelining, lazyConnect, enableOfflineQueue, retryStrategy: _retry, ...perNode } = options;
  const cluster = new (ioredis().Cluster)(target.nodes, {
    enableAutoPipelining,
    // The slot map is re-read every second. ioredis follows a MOVED reply for a command sent alone,
    // but an auto-pipelined batch whose commands get different MOVED replies (several slots moved,
    // or a map left stale by a node that went down and came back) fails each command and leaves the
    // map as it was: without this, such a client kept failing every call to those slots for good.
    slotsRefreshInterval: 1000,
    lazyConnect,
    enableOfflineQueue,
    redisOptions: { ...perNode, username: target.username, password: target.password },
  });
  cluster.on('error', (err: Error) => quiet('error', `redis cluster: ${err.message}`));
  // A node of the cluster failing is reported on the node, not the cluster.
  cluster.on('node error', (err: Error, address: string) => quiet('error', `redis cluster node ${address}: ${err.message}`));
  return cluster;
}

/** True for a cluster client: every script call must then keep to one hash slot. */
export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof ioredis().Cluster;
}
