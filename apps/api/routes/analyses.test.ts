import { analysesSuite } from '../testutil/analyses.suite.ts';

analysesSuite('embedded');
