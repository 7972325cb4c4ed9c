export { CLUSTER_SCHEME, connectRedis, isCluster, parseRedisUrl, type RedisClient, type RedisTarget } from './connect.ts';
export { defineKeyedScript, type KeyedScript } from './script.ts';
