import { exactnessSuite } from './exactness.suite.ts';

exactnessSuite('embedded');
