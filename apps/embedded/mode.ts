import type { Env } from '../../lib/config/index.ts';

/**
 * What `npm start` runs, from the service URLs set (contracts.md "Starting it"):
 * - none → the embedded default, every part in this process, state under DATA_DIR;
 * - all three → every app (api, normalizer, poller, dispatcher) in this process against them;
 * - REDIS_URL alone → keys, limits, cache and push state in Redis, the pipeline embedded.
 * Kafka and ClickHouse run the pipeline together (the normalizer reads one and writes the other),
 * and its apps share their state through Redis (the poller's cache, the dispatcher's queues), so
 * either of them without the other two is refused with what is missing rather than half-run.
 */
export interface StartMode {
  distributed: boolean;
  /** The banner's line naming the mode. */
  banner: string;
}

export function startModeOf(env: Pick<Env, 'REDIS_URL' | 'KAFKA_BROKERS' | 'CLICKHOUSE_URL'>): StartMode | { error: string } {
  const set = {
    REDIS_URL: env.REDIS_URL !== undefined,
    KAFKA_BROKERS: env.KAFKA_BROKERS !== undefined,
    CLICKHOUSE_URL: env.CLICKHOUSE_URL !== undefined,
  };
  if (set.KAFKA_BROKERS || set.CLICKHOUSE_URL) {
    const missing = Object.entries(set).filter(([, on]) => !on).map(([name]) => name);
    if (missing.length) {
      return { error: `npm start: KAFKA_BROKERS and CLICKHOUSE_URL run the distributed pipeline, which also needs REDIS_URL; missing: ${missing.join(', ')}. Set all three, only REDIS_URL, or none (embedded default).` };
    }
    return { distributed: true, banner: 'distributed: Redis, Kafka and ClickHouse; api, normalizer, poller and dispatcher in this process' };
  }
  return set.REDIS_URL
    ? {
      distributed: false,
      banner: 'Redis for keys, limits, cache and push state; embedded: raw-poll log, normalizer, lanes, poller and webhook delivery (DATA_DIR)',
    }
    : { distributed: false, banner: 'embedded default: every part in this process, state under DATA_DIR' };
}
