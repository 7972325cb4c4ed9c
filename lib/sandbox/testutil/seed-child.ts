/**
 * A first start's seed in a process of its own, for the kill-during-seeding test (seed.test.ts):
 * seeds the DATA_DIR argv[2] with argv[3] shipments over 90 days ending at argv[4] (epoch ms), then
 * prints `seeded <polls>`. The test kills it with SIGKILL while the history is being written.
 */
import { seedEmbeddedHistory } from '../seed.ts';

const [dir, shipments, now] = process.argv.slice(2);
if (!dir || !shipments || !now) throw new Error('usage: seed-child.ts DATA_DIR SHIPMENTS NOW_MS');
const seeded = await seedEmbeddedHistory(dir, { shipments: Number(shipments), days: 90, now: Number(now) });
process.stdout.write(`seeded ${seeded.polls}\n`);
