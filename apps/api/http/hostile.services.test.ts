import { storeBackedHostileSuite } from '../testutil/hostile.suite.ts';

storeBackedHostileSuite('redis');
