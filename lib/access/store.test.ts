import { accessStoreSuite } from './store.suite.ts';
import { embeddedHarness } from './testing.ts';

accessStoreSuite(embeddedHarness);
