import { adminThrottleSuite, hostileInputSuite, storeBackedHostileSuite, timeoutsSuite } from './hostile.suite.ts';

hostileInputSuite();
timeoutsSuite();
adminThrottleSuite();
storeBackedHostileSuite('embedded');
