import { analysesShareSuite } from '../testutil/analyses-share.suite.ts';

analysesShareSuite('embedded');
