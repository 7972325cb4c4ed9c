import type { DetectCandidate } from '../../../../lib/detect/index.ts';
import type { Awb } from '../../../../lib/schemas/index.ts';
import { checkAwb, detectionFor } from '../awb-input.ts';
import { BatchBodySchema, BatchItemSchema, readBody } from '../../http/bodies.ts';
import { checkShipmentInput } from '../metered.ts';
import type { ApiDeps } from '../../context/deps.ts';
import { ApiError } from '../../http/errors.ts';

/** What these functions use of the API's dependencies. */
export type BatchBodyDeps = Pick<ApiDeps, 'product'>;

const ITEM_EXAMPLE = '{"carrier"?: "...", "awb": "..."}';
const BATCH_EXAMPLE = `{"items": [${ITEM_EXAMPLE}, ...]}`;

/** contracts.md: 1 to 100 items. */
export const MAX_BATCH_ITEMS = 100;

/** One item after its own checks: what to look up, or the 400 it gets (consuming nothing). */
export type BatchItem =
  | { index: number; kind: 'named'; carrier: string; awb: Awb }
  | { index: number; kind: 'detect'; awb: Awb; candidates: DetectCandidate[] }
  | { index: number; kind: 'invalid'; error: ApiError };

/**
 * The batch body, or the 400 `bad_request` that refuses the whole batch: not an object with an
 * `items` array of 1 to 100 objects. Anything wrong inside an item (its AWB, its carrier, a shape
 * no carrier uses) refuses that item only, with the code a single lookup would get.
 */
export function parseBatchBody(deps: BatchBodyDeps, body: unknown): BatchItem[] | ApiError {
  const envelope = readBody(BatchBodySchema, body, BATCH_EXAMPLE);
  if (envelope instanceof ApiError) return new ApiError('bad_request', `The body must be JSON ${BATCH_EXAMPLE}.`);
  const { items } = envelope;
  if (items.length < 1 || items.length > MAX_BATCH_ITEMS) {
    return new ApiError('bad_request', `A batch holds 1 to ${MAX_BATCH_ITEMS} items; this one has ${items.length}.`);
  }
  const bad = items.findIndex((item) => item === null || typeof item !== 'object' || Array.isArray(item));
  if (bad >= 0) return new ApiError('bad_request', `items[${bad}] must be an object {"carrier"?: "...", "awb": "..."}.`);
  return items.map((raw, index): BatchItem => {
    const item = readBody(BatchItemSchema, raw, ITEM_EXAMPLE);
    if (item instanceof ApiError) return { index, kind: 'invalid', error: item };
    if (item.carrier !== undefined && item.carrier !== null) {
      const named = checkShipmentInput(deps, item.carrier, item.awb);
      return named instanceof ApiError ? { index, kind: 'invalid', error: named } : { index, kind: 'named', ...named };
    }
    const awb = checkAwb(item.awb);
    if (awb instanceof ApiError) return { index, kind: 'invalid', error: awb };
    const detection = detectionFor(deps, awb);
    if (detection instanceof ApiError) return { index, kind: 'invalid', error: detection };
    return { index, kind: 'detect', awb, candidates: detection.candidates };
  });
}
