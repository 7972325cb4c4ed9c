import { batchSuite, idempotencySuite } from './batch.suite.ts';

batchSuite('redis');
idempotencySuite('redis');
batchSuite('redis-cluster');
idempotencySuite('redis-cluster');
