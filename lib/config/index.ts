export * from './schemas.ts';
export * from './load.ts';
export * from './admin-token.ts';
