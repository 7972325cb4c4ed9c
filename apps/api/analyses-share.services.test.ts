import { analysesShareSuite } from './analyses-share.suite.ts';

analysesShareSuite('redis');
analysesShareSuite('redis-cluster');
