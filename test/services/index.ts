/**
 * The test services by name: Redis, ClickHouse, Kafka and a 3-master Redis Cluster, each our own
 * process on 127.0.0.1 with its state under .services/ (scripts/services/README.md). Every address
 * a test uses comes from here (through vitest's inject(), see urls.ts).
 */
import * as clickhouse from './clickhouse.ts';
import * as kafka from './kafka.ts';
import { ensureInstalled } from './install.ts';
import { SERVICE_NAMES, type ServiceName } from './ports.ts';
import * as redisCluster from './redis-cluster.ts';
import * as redis from './redis.ts';

export { ENV_NAMES, SERVICE_NAMES, serviceEnv, type ServiceName } from './ports.ts';

export interface Service {
  /** Starts it unless it runs (installing what is missing first); true when this call started it. */
  start(log?: (line: string) => void): Promise<boolean>;
  /** Stops it (SIGTERM, SIGKILL after 60 s); its data stays. */
  stop(log?: (line: string) => void): Promise<void>;
  running(): boolean;
  pids(): number[];
  /** Its address: REDIS_URL, REDIS_CLUSTER_URL, CLICKHOUSE_URL or KAFKA_BROKERS. */
  url(): string;
}

export const SERVICES: Record<ServiceName, Service> = { redis, 'redis-cluster': redisCluster, clickhouse, kafka };

/**
 * Starts those of `names` that are not running, in order; the names of those this call started.
 * `onStarted` hears of each at once, so a caller can stop them even when a later one fails to start.
 */
export async function startServices(
  names: readonly ServiceName[] = SERVICE_NAMES, log: (line: string) => void = console.log, onStarted: (name: ServiceName) => void = () => undefined,
): Promise<ServiceName[]> {
  // One install run for all of them: on a fresh machine one `apt-get update` instead of one per service.
  await ensureInstalled(names.filter((name) => !SERVICES[name].running()), log);
  const started: ServiceName[] = [];
  for (const name of names) {
    if (!(await SERVICES[name].start(log))) continue;
    started.push(name);
    onStarted(name);
  }
  return started;
}

/** Stops `names`, Kafka first (the slowest to stop cleanly), Redis last. */
export async function stopServices(names: readonly ServiceName[] = SERVICE_NAMES, log: (line: string) => void = console.log): Promise<void> {
  const order: ServiceName[] = ['kafka', 'clickhouse', 'redis-cluster', 'redis'];
  for (const name of order) if (names.includes(name)) await SERVICES[name].stop(log);
}
