/**
 * Worker thread of bench/normalize-threads.ts: each message is a list of raw-poll values; the answer
 * is their rows as the writer would send them (JSONEachRow text per table), so the measured work
 * is the normalizer's CPU work: decode, check, normalize, toRows, encode, and the hand-back.
 */
import { parentPort } from 'node:worker_threads';
import { jsonEachRowText } from '../lib/clickhouse/json-each-row.ts';
import { processPollMessage } from '../lib/pipeline/process-poll.ts';
import { loadProduct } from '../lib/product/index.ts';

const product = loadProduct();
const resolveCarrier = (name: string) => product.registry.resolve(name);

parentPort!.on('message', (values: string[]) => {
  const polls: object[] = [];
  const events: object[] = [];
  const shipments: object[] = [];
  for (const value of values) {
    const outcome = processPollMessage(value, product.rules, resolveCarrier, 'live');
    if (outcome.kind !== 'rows') continue;
    polls.push(outcome.rows.poll);
    events.push(...outcome.rows.events);
    if (outcome.rows.shipment) shipments.push(outcome.rows.shipment);
  }
  parentPort!.postMessage([jsonEachRowText(polls), jsonEachRowText(events), jsonEachRowText(shipments)]);
});
