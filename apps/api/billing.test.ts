import { billingSuite } from './billing.suite.ts';

billingSuite('embedded');
