export * from './types.ts';
export * from './book.ts';
export * from './closure.ts';
export * from './window.ts';
export * from './compare.ts';
export { median } from './median.ts';
