import { runningLateApiSuite } from '../testutil/running-late.suite.ts';

runningLateApiSuite('embedded');
