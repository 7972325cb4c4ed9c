import { batchSuite, idempotencySuite } from '../testutil/batch.suite.ts';

batchSuite('redis');
idempotencySuite('redis');
batchSuite('redis-cluster');
idempotencySuite('redis-cluster');
