import { analysesShareSuite } from '../testutil/analyses-share.suite.ts';

analysesShareSuite('redis');
analysesShareSuite('redis-cluster');
