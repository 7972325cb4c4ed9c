import pLimit, { type LimitFunction } from 'p-limit';
import { MAX_PROBES, probeCandidates, type DetectCandidate } from '../../../lib/detect/index.ts';
import { isFresh, type CachedLookup } from '../../../lib/cache/index.ts';
import type { Awb, KeyMode } from '../../../lib/schemas/index.ts';
import type { LookupResult } from '../../../lib/tracking/index.ts';
import type { ApiDeps } from '../context/deps.ts';

/** What these functions use of the API's dependencies. */
export type CarrierLookupDeps = Pick<ApiDeps, 'clock' | 'metrics' | 'tracking'>;

/** A lookup's answer and the carrier that gave it (the detected one when none was named). */
export type CarrierAnswer =
  | { kind: 'found'; carrier: string; result: Extract<LookupResult, { kind: 'found' }> }
  /** `tried`: the carriers asked (one when named, up to MAX_PROBES when detected). */
  | { kind: 'not_found'; tried: string[] }
  | { kind: 'upstream_error'; tried: string[] };

/** Runs a carrier's lookups under that carrier's concurrency cap (a batch's per-carrier limit). */
export type CarrierGate = (carrier: string, run: () => Promise<LookupResult>) => Promise<LookupResult>;

/** No cap: a single lookup asks one carrier at a time anyway. */
export const UNGATED: CarrierGate = (_carrier, run) => run();

/** A gate allowing `perCarrier` lookups of one carrier at a time, carriers independent of each other. */
export function perCarrierGate(perCarrier: number): CarrierGate {
  const limits = new Map<string, LimitFunction>();
  return (carrier, run) => {
    let limit = limits.get(carrier);
    if (!limit) limits.set(carrier, (limit = pLimit(perCarrier)));
    return limit(run);
  };
}

function counted(deps: CarrierLookupDeps, carrier: string, result: LookupResult): void {
  const outcome = result.kind === 'found' ? (result.stale ? 'stale' : result.cached ? 'cached' : 'live') : result.kind;
  deps.metrics.lookups.inc({ outcome, carrier });
}

/** One lookup of a named carrier (cache, then the carrier), as `GET /v1/track/{carrier}/{awb}` makes it. */
export async function namedLookup(
  deps: CarrierLookupDeps, carrier: string, awb: Awb, mode: KeyMode, gate: CarrierGate = UNGATED, cacheRead?: Promise<CachedLookup | null>,
): Promise<CarrierAnswer> {
  // The gate bounds carrier polls: a fresh cache entry polls nothing and need not queue for it
  // (queueing cost a cached batch item a third of its time).
  const cached = cacheRead ? await cacheRead : undefined;
  const read = cacheRead ? Promise.resolve(cached ?? null) : undefined;
  const result = cached && isFresh(cached, deps.clock())
    ? await deps.tracking.lookup(carrier, awb, mode, read)
    : await gate(carrier, () => deps.tracking.lookup(carrier, awb, mode, read));
  counted(deps, carrier, result);
  if (result.kind === 'found') return { kind: 'found', carrier, result };
  return { kind: result.kind, tried: [carrier] };
}

/**
 * A lookup without a carrier (contracts.md): the candidates, best first, asked in turn (at most
 * MAX_PROBES) until one knows the number. Each ask is an ordinary lookup of that carrier, so what
 * is found is cached under its real carrier and a later lookup naming it is a cache hit; "not
 * found" answers are cached per carrier too, so asking again costs no carrier poll for a while.
 */
export async function detectedLookup(
  deps: CarrierLookupDeps, candidates: readonly DetectCandidate[], awb: Awb, mode: KeyMode, gate: CarrierGate = UNGATED,
): Promise<CarrierAnswer> {
  const outcome = await probeCandidates(candidates.slice(0, MAX_PROBES).map((c) => c.slug), async (slug) => {
    const result = await gate(slug, () => deps.tracking.lookup(slug, awb, mode));
    counted(deps, slug, result);
    return result;
  });
  if (outcome.kind === 'found') return { kind: 'found', carrier: outcome.slug, result: outcome.answer };
  return { kind: outcome.kind, tried: outcome.tried };
}

/** The 404 / 502 sentence of an answer, naming what was asked. */
export function answerMessage(answer: Exclude<CarrierAnswer, { kind: 'found' }>, number: Awb, detected: boolean): string {
  const carriers = answer.tried.join(', ');
  if (answer.kind === 'not_found') {
    return detected
      ? `No tracking scans exist for consignment ${number} at any carrier its shape fits (asked: ${carriers}).`
      : `No tracking scans exist for ${carriers} consignment ${number}.`;
  }
  return detected
    ? `The carriers consignment ${number} may belong to (${carriers}) could not all be reached, and none that answered knows it. Try again shortly.`
    : `The ${carriers} network could not be reached and no earlier record exists. Try again shortly.`;
}
