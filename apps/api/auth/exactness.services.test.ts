import { exactnessSuite } from '../testutil/exactness.suite.ts';

exactnessSuite('redis');
exactnessSuite('redis-cluster');
