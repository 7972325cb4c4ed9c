import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { compareLanes, isPincode } from '../../../lib/lanes/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { countLookup } from '../lookup/metered.ts';
import { api } from '../openapi/spec.ts';
import { LaneComparisonSchema, PincodeParam } from '../openapi/schemas.ts';
import { z } from 'zod';

/** What these routes use of the API's dependencies. */
type LaneDeps = Pick<ApiDeps, 'access' | 'clock' | 'lanes' | 'metrics' | 'product' | 'tracking'>;

/**
 * GET /v1/lanes/:origin_pincode/:destination_pincode (contracts.md "Lanes"): every carrier's
 * windowed figures on the lane of the two pincodes' first three digits. Metered exactly like a
 * track call answered 200: the same checks in the same order (key → plan → input → burst → daily
 * → period quota) through the access store's one authorize step, one lookup consumed per 200, the
 * lookup given back if the answer fails. trk_test_ keys see the sandbox's lanes.
 */
export function registerLaneRoutes(app: FastifyInstance, deps: LaneDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { origin_pincode: string; destination_pincode: string } }>, reply: FastifyReply) => {
    const origin = request.params.origin_pincode.trim();
    const destination = request.params.destination_pincode.trim();
    const valid = isPincode(origin) && isPincode(destination);
    const { key: record, ticket } = await countLookup(
      deps, request, reply,
      valid ? null : new ApiError('invalid_pincode', 'Origin and destination must be Indian pincodes of exactly 6 digits.'),
    );
    const originPrefix = origin.slice(0, 3);
    const destinationPrefix = destination.slice(0, 3);
    try {
      const stats = await deps.lanes.lanesBetween(originPrefix, destinationPrefix, record.mode);
      // Where the figures come from a copy, when it was read and when it is read next (the CLI's
      // explanation of an empty or dated answer); computed-now figures have no such headers.
      const fresh = deps.lanes.freshness?.();
      if (fresh?.readAtMs != null) {
        reply.header('lanes-read-at', new Date(fresh.readAtMs).toISOString());
        reply.header('lanes-next-read-at', new Date(fresh.nextReadAtMs).toISOString());
      }
      return compareLanes(originPrefix, destinationPrefix, deps.lanes.windowDays, stats);
    } catch (err) {
      // Not answered 200: the lookup is given back, as for a track call that fails.
      await deps.access.refund(ticket);
      throw err;
    }
  };
  app.get('/v1/lanes/:origin_pincode/:destination_pincode', api({
    operationId: 'lanes', summary: 'Compare carriers on a lane', caller: 'key', limits: 'metered',
    description: 'Every carrier\'s figures on the lane of the two pincodes\' first three digits, over shipments closed in the last window_days (default 90). '
      + 'Figures are null for a carrier with fewer than 30 delivered shipments in the window; rates are null when nothing could be counted. '
      + 'p50 is the median (mean of the middle two), p90 interpolates at rank 0.9·(n−1). trk_test_ keys see the sandbox\'s lanes. '
      + 'One lookup, like a track call answered 200.',
    params: z.object({ origin_pincode: PincodeParam, destination_pincode: PincodeParam }),
    responses: { 200: { description: 'The lane comparison', schema: LaneComparisonSchema } },
    errors: ['invalid_pincode', 'daily_quota_exceeded', 'plan_quota_exceeded'],
  }), handler);
  methodNotAllowed(app, '/v1/lanes/:origin_pincode/:destination_pincode', ['GET']);
}
