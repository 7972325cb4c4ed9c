import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { effectiveStatus, type LimitState } from '../../../lib/access/index.ts';
import { compareLanes, isPincode } from '../../../lib/lanes/index.ts';
import { acceptKeyRecord, presentedKey } from '../auth.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';

function limitHeaders(reply: FastifyReply, state: LimitState): void {
  reply.header('RateLimit-Limit', state.limits.burst);
  reply.header('RateLimit-Remaining', state.remaining.burst);
  reply.header('RateLimit-Reset', state.burstResetSeconds);
  reply.header('X-Lookups-Remaining', state.remaining.period);
}

/**
 * GET /v1/lanes/:origin_pincode/:destination_pincode (contracts.md "Lanes"): every carrier's
 * windowed figures on the lane of the two pincodes' first three digits. Metered exactly like a
 * track call answered 200: the same checks in the same order (key → plan → input → burst → daily
 * → period quota) through the access store's one authorize step, one lookup consumed per 200, the
 * lookup given back if the answer fails. trk_test_ keys see the sandbox's lanes.
 */
export function registerLaneRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { origin: string; destination: string } }>, reply: FastifyReply) => {
    const now = new Date(deps.clock());
    const key = presentedKey(request);
    const origin = request.params.origin.trim();
    const destination = request.params.destination.trim();
    const valid = isPincode(origin) && isPincode(destination);
    const { record: stored, consumed } = await deps.access.authorize(key, now, valid);
    const record = acceptKeyRecord(request, stored, now);
    if (effectiveStatus(record, now) === 'expired') {
      throw new ApiError('payment_required', `The plan period ended at ${record.period_end}. Renew to restore access at once.`);
    }
    if (!valid) throw new ApiError('invalid_pincode', 'Origin and destination must be Indian pincodes of exactly 6 digits.');
    if (!consumed) throw new Error('the access store counted nothing for a valid lane lookup of an existing key');
    if (!consumed.ok) {
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
    const originPrefix = origin.slice(0, 3);
    const destinationPrefix = destination.slice(0, 3);
    try {
      const stats = await deps.lanes.lanesBetween(originPrefix, destinationPrefix, record.mode);
      return compareLanes(originPrefix, destinationPrefix, deps.lanes.windowDays, stats);
    } catch (err) {
      // Not answered 200: the lookup is given back, as for a track call that fails.
      await deps.access.refund(consumed.ticket);
      throw err;
    }
  };
  app.get('/v1/lanes/:origin/:destination', handler);
  methodNotAllowed(app, '/v1/lanes/:origin/:destination', ['GET']);
}
