import { accessBatchSuite } from './testutil/batch.suite.ts';
import { redisClusterHarness, redisHarness } from './testutil/stores.ts';

accessBatchSuite(redisHarness);
accessBatchSuite(redisClusterHarness);
