import { batchSuite, idempotencySuite } from './batch.suite.ts';

batchSuite('embedded');
idempotencySuite('embedded');
