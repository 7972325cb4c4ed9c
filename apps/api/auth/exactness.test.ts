import { exactnessSuite } from '../testutil/exactness.suite.ts';

exactnessSuite('embedded');
