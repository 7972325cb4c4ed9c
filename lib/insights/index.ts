export * from './insights.ts';
export * from './json.ts';
