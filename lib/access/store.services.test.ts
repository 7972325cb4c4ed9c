import { accessStoreSuite } from './testutil/store.suite.ts';
import { redisClusterHarness, redisHarness } from './testutil/stores.ts';

accessStoreSuite(redisHarness);
// The 3-master cluster of `npm run services`: every key's data in one slot, one slot per script.
accessStoreSuite(redisClusterHarness);
