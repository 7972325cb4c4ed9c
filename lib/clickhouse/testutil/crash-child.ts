/**
 * A normalizer that dies before its final flush, for the writer's re-delivery test:
 * reads carrier_poll.v1 NDJSON from argv[4], writes the first argv[5] polls and flushes them, queues
 * the rest without flushing, prints "ready" and kills itself (no close, no flush: a crash).
 * argv[2] = ClickHouse URL, argv[3] = database.
 */
import { readFileSync } from 'node:fs';
import { normalizePoll } from '../../normalize/index.ts';
import { loadProduct } from '../../product/index.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { createClickHouseClient } from '../client.ts';
import { toRows } from '../rows.ts';
import { ClickHouseWriter } from '../writer.ts';

const [url, database, file, flushedCount] = process.argv.slice(2);
if (!url || !database || !file || !flushedCount) throw new Error('usage: crash-child.ts URL DATABASE POLLS.ndjson FLUSHED_COUNT');
const { rules } = loadProduct();
const polls = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as CarrierPoll);
const rows = polls.map((poll) => toRows(poll, normalizePoll(poll, rules), rules.mappingVersion));
const writer = new ClickHouseWriter(createClickHouseClient({ url, database }), { flushIntervalMs: 3_600_000 });
writer.write(rows.slice(0, Number(flushedCount)));
await writer.flush();
writer.write(rows.slice(Number(flushedCount)));
process.stdout.write('ready\n', () => process.kill(process.pid, 'SIGKILL'));
