import { accessBatchSuite } from './batch.suite.ts';
import { embeddedHarness } from './testing.ts';

accessBatchSuite(embeddedHarness);
