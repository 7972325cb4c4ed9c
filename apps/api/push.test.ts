import { pushSuite } from './push.suite.ts';

pushSuite('embedded');
