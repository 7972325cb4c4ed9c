import { accessBatchSuite } from './testutil/batch.suite.ts';
import { embeddedHarness } from './testutil/stores.ts';

accessBatchSuite(embeddedHarness);
