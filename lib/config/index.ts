export * from './schemas.ts';
export * from './load.ts';
