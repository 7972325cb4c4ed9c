/**
 * A process with a Kafka bus, for the bus's crash and sharing tests (kafka-bus.services.test.ts):
 * `node bus-child.ts DATA_DIR BROKERS POLLS_FILE` opens a KafkaBus on DATA_DIR, prints
 * `open <slot dir>`, publishes the polls of POLLS_FILE (JSON lines of carrier_poll.v1), prints
 * `published`, then waits for them to reach Kafka and prints `flushed` (never, while BROKERS is
 * unreachable). It stays up until killed: the tests end it with SIGKILL, mid-drain on purpose.
 */
import { readFileSync } from 'node:fs';
import type { CarrierPoll } from '../../schemas/index.ts';
import { createKafka } from '../client.ts';
import { KafkaBus } from '../kafka-bus.ts';

const [dataDir, brokers, pollsFile] = process.argv.slice(2);
if (!dataDir || !brokers || !pollsFile) throw new Error('usage: bus-child.ts DATA_DIR BROKERS POLLS_FILE');
const bus = await KafkaBus.open({ kafka: createKafka({ brokers, clientId: 'bus-child', log: () => {} }), dataDir, retryDelayMs: 200 });
process.stdout.write(`open\n`);
for (const line of readFileSync(pollsFile, 'utf8').split('\n')) if (line) bus.publish(JSON.parse(line) as CarrierPoll, 'test');
process.stdout.write('published\n');
await bus.flush();
process.stdout.write('flushed\n');
setInterval(() => {}, 60_000);
