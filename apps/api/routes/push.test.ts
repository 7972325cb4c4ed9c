import { pushSuite } from '../testutil/push.suite.ts';

pushSuite('embedded');
