export { dispatchAtEndOfTurn } from './turn.ts';
