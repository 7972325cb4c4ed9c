import { brandingSuite } from '../testutil/branding.suite.ts';

brandingSuite('redis');
