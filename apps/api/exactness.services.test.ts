import { exactnessSuite } from './exactness.suite.ts';

exactnessSuite('redis');
exactnessSuite('redis-cluster');
