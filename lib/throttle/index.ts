export { stateOf, type AddressThrottle, type ThrottleRule, type ThrottleState } from './rule.ts';
export { EmbeddedThrottle } from './embedded.ts';
export { RedisThrottle } from './redis.ts';
export { WindowCounter, type WindowVerdict } from './window-counter.ts';
