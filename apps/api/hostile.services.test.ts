import { storeBackedHostileSuite } from './hostile.suite.ts';

storeBackedHostileSuite('redis');
