import { keyStandingSuite } from '../testutil/key-standing.suite.ts';

keyStandingSuite('embedded');
