import { describe, expect, it } from 'vitest';
import { startModeOf } from './mode.ts';

describe('npm start modes', () => {
  it('nothing set: the embedded default; REDIS_URL alone: Redis state, embedded pipeline; all three: distributed', () => {
    expect(startModeOf({})).toMatchObject({ distributed: false, banner: expect.stringContaining('embedded default') });
    expect(startModeOf({ REDIS_URL: 'redis://r:6379' })).toMatchObject({ distributed: false, banner: expect.stringContaining('embedded: raw-poll log') });
    expect(startModeOf({ REDIS_URL: 'redis://r', KAFKA_BROKERS: 'k:9092', CLICKHOUSE_URL: 'http://c:8123' })).toMatchObject({ distributed: true });
  });

  it('Kafka or ClickHouse without the others is refused, naming what is missing', () => {
    expect(startModeOf({ KAFKA_BROKERS: 'k:9092' })).toEqual({ error: expect.stringContaining('missing: REDIS_URL, CLICKHOUSE_URL') });
    expect(startModeOf({ REDIS_URL: 'redis://r', CLICKHOUSE_URL: 'http://c:8123' })).toEqual({ error: expect.stringContaining('missing: KAFKA_BROKERS') });
  });
});
