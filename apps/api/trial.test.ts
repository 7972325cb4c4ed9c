import { trialSuite } from './trial.suite.ts';

trialSuite('embedded');
