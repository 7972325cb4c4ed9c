export { withoutRepeats, type LineLog } from './repeats.ts';
