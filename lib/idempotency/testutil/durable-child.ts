/**
 * A process killed right after idempotency answers were acknowledged, for the embedded store's
 * durability test (embedded.test.ts): opens the store in argv[2] and answers keys `key-<round>-<i>`
 * four at a time (claim, then complete, as the batch route does), printing `acked <key>` once
 * `complete` resolved: the moment the route sends the answer. It never closes the store; the test
 * kills it with SIGKILL.
 */
import { EmbeddedIdempotencyStore } from '../embedded.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: durable-child.ts DIR');
const NOW = Date.parse('2026-11-28T05:00:00.000Z');
const store = new EmbeddedIdempotencyStore(dir, () => NOW);

async function answer(key: string): Promise<void> {
  const claim = await store.claim('scope', key, `fp-${key}`, NOW);
  if (claim.kind !== 'claimed') throw new Error(`${key} was not claimed: ${claim.kind}`);
  await store.complete('scope', key, `fp-${key}`, { status: 200, body: `{"key":"${key}"}` }, NOW);
  // Synchronous on a pipe (Linux): once the test reads it, `complete` had resolved.
  process.stdout.write(`acked ${key}\n`);
}

for (let round = 0; ; round++) await Promise.all([0, 1, 2, 3].map((i) => answer(`key-${round}-${i}`)));
