import { adminThrottleSuite, hostileInputSuite, storeBackedHostileSuite, timeoutsSuite } from '../testutil/hostile.suite.ts';

hostileInputSuite();
timeoutsSuite();
adminThrottleSuite();
storeBackedHostileSuite('embedded');
