export * from './types.ts';
export * from './episodes.ts';
export * from './workdays.ts';
export * from './model.ts';
export * from './records.ts';
export * from './backtest.ts';
export * from './places.ts';
export * from './book.ts';
