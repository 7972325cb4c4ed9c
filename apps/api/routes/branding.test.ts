import { brandingSuite } from '../testutil/branding.suite.ts';

brandingSuite('embedded');
