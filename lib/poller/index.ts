export * from './plan.ts';
export * from './run.ts';
