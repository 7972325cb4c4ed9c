export { MAX_UPDATE_ATTEMPTS, type Kv, type Transaction } from './kv.ts';
export { RedisKv } from './redis.ts';
export { EmbeddedKv, type KvDump } from './embedded.ts';
export { Journal, type JournalOptions, type OpenedJournal } from './journal.ts';
export { appendToFile, appendToFileLater, replaceFile } from './files.ts';
