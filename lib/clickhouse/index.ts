export * from './client.ts';
export * from './datetime.ts';
export * from './events.ts';
export * from './lanes.ts';
export * from './migrate.ts';
export * from './rows.ts';
export * from './sql.ts';
export * from './writer.ts';
