import { analysesSuite } from './analyses.suite.ts';

analysesSuite('redis');
