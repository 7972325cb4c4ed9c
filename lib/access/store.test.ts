import { accessStoreSuite } from './testutil/store.suite.ts';
import { embeddedHarness } from './testutil/stores.ts';

accessStoreSuite(embeddedHarness);
