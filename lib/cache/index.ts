export * from './policy.ts';
export * from './types.ts';
export { createMemoryCache, embeddedRecordsDir, DEFAULT_CACHE_MAX_BYTES, type MemoryCache, type MemoryCacheOptions } from './memory.ts';
export { answerJson, compactShipment, entryBytes, type AnswerFacts, type CachedShipment } from './entry.ts';
export { createRedisCache } from './redis.ts';
