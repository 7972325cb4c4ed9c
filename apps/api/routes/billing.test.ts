import { billingSuite } from '../testutil/billing.suite.ts';

billingSuite('embedded');
