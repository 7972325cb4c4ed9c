import { analysesShareSuite } from './analyses-share.suite.ts';

analysesShareSuite('embedded');
