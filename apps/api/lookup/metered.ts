import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyMode, type ConsumeTicket, type KeyRecord, type LimitState } from '../../../lib/access/index.ts';
import type { Awb } from '../../../lib/schemas/index.ts';
import type { LookupResult } from '../../../lib/tracking/index.ts';
import { acceptKeyRecord, presentedKey } from '../auth/api-key.ts';
import { checkAwb } from './awb-input.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError } from '../http/errors.ts';

/** What these functions use of the API's dependencies. */
export type LookupDeps = Pick<ApiDeps, 'access' | 'clock' | 'metrics' | 'product' | 'tracking'>;

export function limitHeaders(reply: FastifyReply, state: LimitState): void {
  reply.header('RateLimit-Limit', state.limits.burst);
  reply.header('RateLimit-Remaining', state.remaining.burst);
  reply.header('RateLimit-Reset', state.burstResetSeconds);
  reply.header('X-Lookups-Remaining', state.remaining.period);
}

/** The answer when the store refused the key itself at the count (it changed since the record was read). */
export function keyRefusedAtCount(code: 'payment_required' | 'invalid_api_key'): ApiError {
  return code === 'payment_required'
    ? new ApiError('payment_required', 'The plan period has ended. Renew to restore access at once.')
    : new ApiError('invalid_api_key', 'The API key is not valid.');
}

/** The canonical carrier slug and the parsed AWB, or the 400 they deserve (the carrier is checked first). */
export function checkShipmentInput(deps: Pick<ApiDeps, 'product'>, carrierName: string, rawAwb: string): ShipmentInput | ApiError {
  const carrier = deps.product.registry.resolve(carrierName);
  if (!carrier) {
    return new ApiError('unsupported_carrier', `Carrier ${JSON.stringify(carrierName.slice(0, 60))} is not supported. See GET /v1/carriers for the list.`);
  }
  const awb = checkAwb(rawAwb);
  return awb instanceof ApiError ? awb : { carrier, awb };
}

/** What a lookup asks for, checked. */
export interface ShipmentInput {
  carrier: string;
  awb: Awb;
}

/** A lookup that was counted and answered 200 or 404 (the answers that consume one). */
export interface MeteredLookup {
  key: KeyRecord;
  carrier: string;
  awb: Awb;
  result: Exclude<LookupResult, { kind: 'upstream_error' }>;
  ticket: ConsumeTicket;
  remaining: number;
}

/** A lookup counted by the access store: the key's record and the ticket that gives it back. */
export interface CountedLookup {
  key: KeyRecord;
  ticket: ConsumeTicket;
  /** Lookups left in the period after this one. */
  remaining: number;
}

/**
 * The access step every metered call shares (track, watch, lanes): key present → key valid → plan
 * active → input valid (`inputError`, reported only after the key checks) → burst → daily → period
 * quota, counted in one store step. Throws the ApiError of every refusal; sets the limit headers.
 */
export async function countLookup(deps: LookupDeps, request: FastifyRequest, reply: FastifyReply, inputError: ApiError | null): Promise<CountedLookup> {
  const now = new Date(deps.clock());
  const key = presentedKey(request);
  const { record: stored, consumed } = await deps.access.authorize(key, now, inputError === null);
  const record = acceptKeyRecord(request, stored, now);
  if (inputError) throw inputError;
  if (!consumed) throw new Error('the access store counted nothing for a valid lookup of an existing key');
  if (!consumed.ok) {
    // The store refused the key itself: it changed between the record read and the count.
    if (!('limits' in consumed)) throw keyRefusedAtCount(consumed.code);
    limitHeaders(reply, consumed);
    const retryAfter: Record<string, number> = consumed.retryAfterSeconds === undefined ? {} : { 'Retry-After': consumed.retryAfterSeconds };
    const messages = {
      rate_limit_exceeded: `More than ${consumed.limits.burst} requests in one second. Back off with a small random delay.`,
      daily_quota_exceeded: `The daily quota of ${consumed.limits.daily} lookups is used up; it resets at 00:00 UTC.`,
      plan_quota_exceeded: `All ${consumed.limits.period} lookups of this period are used. Renew to reset the count at once.`,
    };
    throw new ApiError(consumed.code, messages[consumed.code], retryAfter);
  }
  limitHeaders(reply, consumed);
  return { key: record, ticket: consumed.ticket, remaining: consumed.remaining.period };
}

/**
 * One metered lookup, as `GET /v1/track` and `POST /v1/trackings` make it (countLookup, then the
 * cache or the carrier). A 502 or an unexpected failure gives the lookup back. The caller answers
 * 200 or 404, or refunds `ticket` itself.
 */
export async function meteredLookup(deps: LookupDeps, request: FastifyRequest, reply: FastifyReply, input: ShipmentInput | ApiError): Promise<MeteredLookup> {
  const key = presentedKey(request);
  // Input is checked (checkShipmentInput) before the store is asked, so the key's record and the
  // count come in one step; but a bad input is reported only after the key checks, as the order requires.
  // The cache read goes out with the access step (with Redis, in one socket write). A refused
  // lookup leaves it unused: a read has no effect.
  const cacheRead = input instanceof ApiError ? undefined : deps.tracking.readCache(input.carrier, input.awb, keyMode(key)!);
  cacheRead?.catch(() => undefined);
  const counted = await countLookup(deps, request, reply, input instanceof ApiError ? input : null);
  // countLookup has thrown a bad input after the key checks; this says so to the compiler.
  if (input instanceof ApiError) throw input;
  const { carrier, awb } = input;

  let result: LookupResult;
  try {
    result = await deps.tracking.lookup(carrier, awb, counted.key.mode, cacheRead);
  } catch (err) {
    // An unexpected failure answers 500, which consumes nothing either: give the lookup back.
    await deps.access.refund(counted.ticket);
    throw err;
  }
  deps.metrics.lookups.inc({ outcome: result.kind === 'found' ? (result.stale ? 'stale' : result.cached ? 'cached' : 'live') : result.kind, carrier });
  if (result.kind === 'upstream_error') {
    // A 502 consumes nothing (decisions.md): give the lookup back.
    await deps.access.refund(counted.ticket);
    reply.header('X-Lookups-Remaining', counted.remaining + 1);
    throw new ApiError('upstream_error', `The ${carrier} network could not be reached and no earlier record exists. Try again shortly.`);
  }
  return { ...counted, carrier, awb, result };
}
