export * from './plan.ts';
export * from './run.ts';
export * from './ticks.ts';
