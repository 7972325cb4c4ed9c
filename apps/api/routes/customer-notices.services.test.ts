import { customerNoticesApiSuite } from '../testutil/customer-notices.suite.ts';

customerNoticesApiSuite('redis');
