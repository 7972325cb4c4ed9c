import { Redis, type RedisOptions } from 'ioredis';
import { withoutRepeats, type LineLog } from '../logging/index.ts';

/**
 * A Redis connection whose connection errors are logged, each distinct one at most once per 10 s.
 * Without an 'error' listener ioredis prints "Unhandled error event" and a stack trace at every
 * reconnection attempt while Redis is down (several a second). Commands still fail as ioredis
 * decides (`maxRetriesPerRequest`), and it keeps reconnecting.
 */
export function connectRedis(url: string, options: RedisOptions = {}, log: LineLog = (_level, message) => console.error(message)): Redis {
  const redis = new Redis(url, options);
  const quiet = withoutRepeats(log);
  redis.on('error', (err: Error) => quiet('error', `redis: ${err.message}`));
  return redis;
}
