import type { ConsumeLimited } from '../../../../lib/access/index.ts';
import type { KeyMode } from '../../../../lib/schemas/index.ts';
import { answerMessage, detectedLookup, namedLookup, perCarrierGate, type CarrierAnswer } from '../carriers.ts';
import type { ApiDeps } from '../../context/deps.ts';
import type { ApiError } from '../../http/errors.ts';
import type { BatchItem } from './body.ts';

/** What these functions use of the API's dependencies. */
export type BatchRunDeps = Pick<ApiDeps, 'clock' | 'metrics' | 'tracking'>;

/**
 * Lookups of one carrier a batch runs at once: enough that 100 items of one carrier take a few
 * carrier round trips, few enough that one customer's batch cannot flood a carrier.
 */
export const PER_CARRIER_CONCURRENCY = 10;

/** An item's answer: its record, or its error (contracts.md). */
export type ItemResult =
  | { index: number; status: 200; json: string }
  | { index: number; status: 400 | 404 | 429 | 502; code: ApiError['code']; message: string };

export interface BatchRun {
  results: ItemResult[];
  /** Granted items whose lookup must be given back (502: consumes nothing). */
  refunds: number;
}

const QUOTA_MESSAGES: Record<ConsumeLimited['code'], (limited: ConsumeLimited) => string> = {
  rate_limit_exceeded: (l) => `More than ${l.limits.burst} requests in one second.`,
  daily_quota_exceeded: (l) => `The daily quota of ${l.limits.daily} lookups is used up; it resets at 00:00 UTC.`,
  plan_quota_exceeded: (l) => `All ${l.limits.period} lookups of this period are used. Renew to reset the count at once.`,
};

/** The unit of carrier work: items asking the same thing share it (one poll for identical items). */
function workKey(item: Exclude<BatchItem, { kind: 'invalid' }>): string {
  return item.kind === 'named' ? `${item.carrier} ${item.awb}` : `? ${item.awb}`;
}

/**
 * Answers a batch's items: invalid ones with their 400, the counted ones past `granted` with the
 * quota's 429, the rest looked up concurrently (identical items once, each carrier under
 * PER_CARRIER_CONCURRENCY), so the batch takes about as long as its slowest carrier.
 */
export async function runBatch(
  deps: BatchRunDeps, items: readonly BatchItem[], granted: number, refused: ConsumeLimited | null, mode: KeyMode,
  logError: (err: unknown) => void,
): Promise<BatchRun> {
  const gate = perCarrierGate(PER_CARRIER_CONCURRENCY);
  const work = new Map<string, Promise<CarrierAnswer>>();
  let seen = 0;
  const pending = items.map((item): ItemResult | { item: Exclude<BatchItem, { kind: 'invalid' }>; answer: Promise<CarrierAnswer> } => {
    if (item.kind === 'invalid') {
      return { index: item.index, status: 400, code: item.error.code, message: item.error.message };
    }
    if (seen++ >= granted) {
      const limited = refused!;
      return { index: item.index, status: 429, code: limited.code, message: QUOTA_MESSAGES[limited.code](limited) };
    }
    const key = workKey(item);
    let answer = work.get(key);
    if (!answer) {
      // Cache reads start now, all in this turn (with Redis one round trip for the whole batch).
      answer = item.kind === 'named'
        ? namedLookup(deps, item.carrier, item.awb, mode, gate, deps.tracking.readCache(item.carrier, item.awb, mode))
        : detectedLookup(deps, item.candidates, item.awb, mode, gate);
      // Settled below for every item; an unexpected failure becomes that item's 502.
      answer.catch(() => undefined);
      work.set(key, answer);
    }
    return { item, answer };
  });

  let refunds = 0;
  const results = await Promise.all(pending.map(async (entry): Promise<ItemResult> => {
    if ('status' in entry) return entry;
    const { item, answer: promise } = entry;
    let answer: CarrierAnswer;
    try {
      answer = await promise;
    } catch (err) {
      logError(err);
      answer = { kind: 'upstream_error', tried: item.kind === 'named' ? [item.carrier] : item.candidates.slice(0, 1).map((c) => c.slug) };
    }
    if (answer.kind === 'found') return { index: item.index, status: 200, json: answer.result.json() };
    const detected = item.kind === 'detect';
    if (answer.kind === 'not_found') return { index: item.index, status: 404, code: 'shipment_not_found', message: answerMessage(answer, item.awb, detected) };
    refunds++;
    return { index: item.index, status: 502, code: 'upstream_error', message: answerMessage(answer, item.awb, detected) };
  }));
  return { results, refunds };
}

const OPEN = Buffer.from('{"results":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/**
 * The answer body: each record's JSON as the single lookup writes it, encoded item by item and
 * concatenated once (joining the records' texts first cost twice as much: they are ropes).
 */
export function batchBody(results: readonly ItemResult[]): Buffer {
  const parts: Buffer[] = [OPEN];
  results.forEach((r, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(Buffer.from(r.status === 200
      ? `{"index":${r.index},"status":200,"tracking":${r.json}}`
      : JSON.stringify({ index: r.index, status: r.status, error: { code: r.code, message: r.message } })));
  });
  parts.push(CLOSE);
  return Buffer.concat(parts);
}
