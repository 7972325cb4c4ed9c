export * from './types.ts';
export { createInProcessBus } from './in-process.ts';
