export * from './policy.ts';
export * from './types.ts';
export { createMemoryCache } from './memory.ts';
export { createRedisCache } from './redis.ts';
