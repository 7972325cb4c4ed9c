export * from './insights.ts';
