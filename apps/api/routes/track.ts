import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { effectiveStatus, keyMode, type LimitState } from '../../../lib/access/index.ts';
import { trackingRecordJson } from '../../../lib/insights/index.ts';
import { acceptKeyRecord, presentedKey } from '../auth.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';

/** decisions.md: trimmed, 4 to 40 characters of [A-Za-z0-9-]. */
const AWB_PATTERN = /^[A-Za-z0-9-]{4,40}$/;

function limitHeaders(reply: FastifyReply, state: LimitState): void {
  reply.header('RateLimit-Limit', state.limits.burst);
  reply.header('RateLimit-Remaining', state.remaining.burst);
  reply.header('RateLimit-Reset', state.burstResetSeconds);
  reply.header('X-Lookups-Remaining', state.remaining.period);
}

/** The canonical carrier slug and the trimmed AWB, or the 400 they deserve. */
function checkInput(deps: ApiDeps, carrierName: string, rawAwb: string): { carrier: string; awb: string } | ApiError {
  const carrier = deps.product.registry.resolve(carrierName);
  if (!carrier) return new ApiError('unsupported_carrier', `Carrier "${carrierName}" is not supported. See /openapi.json for the list of carriers.`);
  const awb = rawAwb.trim();
  if (!AWB_PATTERN.test(awb)) return new ApiError('invalid_awb', 'The consignment number must be 4 to 40 letters, digits or dashes.');
  return { carrier, awb };
}

/**
 * GET /v1/track/:carrier/:awb. Checks in the order of the product's contract: key present → key
 * valid → plan active → input valid → burst → daily → period quota → cache/carrier. Only 200 and
 * 404 answers consume a lookup.
 */
export function registerTrackRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply: FastifyReply) => {
    const now = new Date(deps.clock());
    const key = presentedKey(request);
    // Input is checked before the store is asked, so the key's record and the count come in one
    // step; but a bad input is reported only after the key checks, as the order requires.
    const input = checkInput(deps, request.params.carrier, request.params.awb);
    // The cache read goes out with the access step (with Redis, in one socket write). A refused
    // lookup leaves it unused: a read has no effect.
    const cacheRead = input instanceof ApiError ? undefined : deps.tracking.readCache(input.carrier, input.awb, keyMode(key)!);
    cacheRead?.catch(() => undefined);

    const { record: stored, consumed } = await deps.access.authorize(key, now, !(input instanceof ApiError));
    const record = acceptKeyRecord(request, stored, now);
    if (effectiveStatus(record, now) === 'expired') {
      throw new ApiError('payment_required', `The plan period ended at ${record.period_end}. Renew to restore access at once.`);
    }
    if (input instanceof ApiError) throw input;
    if (!consumed) throw new Error('the access store counted nothing for a valid lookup of an existing key');
    const { carrier, awb } = input;

    if (!consumed.ok) {
      // The store refused the key itself: it changed between the record read and the count.
      if (!('limits' in consumed)) {
        throw consumed.code === 'payment_required'
          ? new ApiError('payment_required', 'The plan period has ended. Renew to restore access at once.')
          : new ApiError('invalid_api_key', 'The API key is not valid.');
      }
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

    let result: Awaited<ReturnType<typeof deps.tracking.lookup>>;
    try {
      result = await deps.tracking.lookup(carrier, awb, record.mode, cacheRead);
    } catch (err) {
      // An unexpected failure answers 500, which consumes nothing either: give the lookup back.
      await deps.access.refund(consumed.ticket);
      throw err;
    }
    deps.metrics.lookups.inc({ outcome: result.kind === 'found' ? (result.record.stale ? 'stale' : result.record.cached ? 'cached' : 'live') : result.kind, carrier });
    if (result.kind === 'upstream_error') {
      // A 502 consumes nothing (decisions.md): give the lookup back.
      await deps.access.refund(consumed.ticket);
      reply.header('X-Lookups-Remaining', consumed.remaining.period + 1);
      throw new ApiError('upstream_error', `The ${carrier} network could not be reached and no earlier record exists. Try again shortly.`);
    }
    if (result.kind === 'not_found') {
      throw new ApiError('shipment_not_found', `No tracking scans exist for ${carrier} consignment ${awb.toUpperCase()}.`);
    }
    // The record's JSON, its cached part written once per cache entry (lib/insights/json.ts).
    return reply.type('application/json; charset=utf-8').send(trackingRecordJson(result.record, result.base));
  };

  app.get('/v1/track/:carrier/:awb', handler);
  methodNotAllowed(app, '/v1/track/:carrier/:awb', ['GET']);
}
