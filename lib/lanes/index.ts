export * from './types.ts';
export * from './book.ts';
export { median } from './median.ts';
