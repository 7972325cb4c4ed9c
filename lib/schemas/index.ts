export * from './carrier-poll.ts';
export * from './tracking-record.ts';
export * from './position.ts';
export type { KeyMode } from './key-mode.ts';
export * from './awb.ts';
