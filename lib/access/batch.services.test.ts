import { accessBatchSuite } from './batch.suite.ts';
import { redisClusterHarness, redisHarness } from './testing.ts';

accessBatchSuite(redisHarness);
accessBatchSuite(redisClusterHarness);
