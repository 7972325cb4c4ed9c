import { keyStandingSuite } from './key-standing.suite.ts';

keyStandingSuite('redis');
