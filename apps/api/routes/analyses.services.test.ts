import { analysesSuite } from '../testutil/analyses.suite.ts';

analysesSuite('redis');
// Every document of a key shares its hash slot: the same on a Redis Cluster.
analysesSuite('redis-cluster');
