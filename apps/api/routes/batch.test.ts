import { batchSuite, idempotencySuite } from '../testutil/batch.suite.ts';

batchSuite('embedded');
idempotencySuite('embedded');
