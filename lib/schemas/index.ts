export * from './carrier-poll.ts';
export * from './tracking-record.ts';
