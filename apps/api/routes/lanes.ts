import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { compareLanes, isPincode } from '../../../lib/lanes/index.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';
import { countLookup } from '../metered-lookup.ts';

/**
 * GET /v1/lanes/:origin_pincode/:destination_pincode (contracts.md "Lanes"): every carrier's
 * windowed figures on the lane of the two pincodes' first three digits. Metered exactly like a
 * track call answered 200: the same checks in the same order (key → plan → input → burst → daily
 * → period quota) through the access store's one authorize step, one lookup consumed per 200, the
 * lookup given back if the answer fails. trk_test_ keys see the sandbox's lanes.
 */
export function registerLaneRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { origin: string; destination: string } }>, reply: FastifyReply) => {
    const origin = request.params.origin.trim();
    const destination = request.params.destination.trim();
    const valid = isPincode(origin) && isPincode(destination);
    const { key: record, ticket } = await countLookup(deps, request, reply, valid ? null : new ApiError('invalid_pincode', 'Origin and destination must be Indian pincodes of exactly 6 digits.'));
    const originPrefix = origin.slice(0, 3);
    const destinationPrefix = destination.slice(0, 3);
    try {
      const stats = await deps.lanes.lanesBetween(originPrefix, destinationPrefix, record.mode);
      return compareLanes(originPrefix, destinationPrefix, deps.lanes.windowDays, stats);
    } catch (err) {
      // Not answered 200: the lookup is given back, as for a track call that fails.
      await deps.access.refund(ticket);
      throw err;
    }
  };
  app.get('/v1/lanes/:origin/:destination', handler);
  methodNotAllowed(app, '/v1/lanes/:origin/:destination', ['GET']);
}
