import { trialSuite } from '../testutil/trial.suite.ts';

trialSuite('embedded');
