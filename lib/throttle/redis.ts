import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/index.ts';
import { stateOf, type AddressThrottle, type ThrottleRule, type ThrottleState } from './rule.ts';

/**
 * The distributed throttle: one sorted set per rule and address (`<namespace><rule>:<address>`),
 * scored by attempt time, trimmed to the window and expiring with it, shared by every API process.
 */
export class RedisThrottle implements AddressThrottle {
  private readonly redis: RedisClient;
  private readonly namespace: string;
  constructor(redis: RedisClient, namespace: string) {
    this.redis = redis;
    this.namespace = namespace;
  }

  private keyOf(rule: ThrottleRule, address: string): string {
    return `${this.namespace}${rule.name}:${address}`;
  }

  async check(rule: ThrottleRule, address: string, now: number): Promise<ThrottleState> {
    const times = await this.redis.zrangebyscore(this.keyOf(rule, address), `(${now - rule.windowMs}`, '+inf');
    return stateOf(rule, times.map((member) => Number(member.split(':')[0])), now);
  }

  async record(rule: ThrottleRule, address: string, now: number): Promise<void> {
    const key = this.keyOf(rule, address);
    // The member carries a random part: two attempts in the same millisecond are two attempts.
    await this.redis.multi()
      .zadd(key, now, `${now}:${randomBytes(4).toString('hex')}`)
      .zremrangebyscore(key, '-inf', now - rule.windowMs)
      .pexpire(key, rule.windowMs)
      .exec();
  }

  async close(): Promise<void> {}
}
