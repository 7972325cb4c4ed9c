export * from './replay-line.ts';
export * from './replay-stream.ts';
