/**
 * A process that dies without closing its store, for the embedded store's crash test:
 * creates a key in the directory argv[2], consumes argv[3] lookups, prints the key, and is killed.
 */
import { EmbeddedAccessStore } from '../embedded-store.ts';
import { plans } from './stores.ts';

const [dir, count] = process.argv.slice(2);
if (!dir || !count) throw new Error('usage: crash-child.ts DIR COUNT');
const now = new Date('2026-11-21T10:00:00.000Z');
const store = new EmbeddedAccessStore({ plans, dir });
const { key, record } = await store.createKey({ plan: 'growth', mode: 'live', email: 'crash@example.in' }, now);
for (let i = 0; i < Number(count); i++) await store.consume(record, new Date(now.getTime() + i * 1000));
process.stdout.write(`${JSON.stringify({ key })}\n`, () => process.kill(process.pid, 'SIGKILL'));
