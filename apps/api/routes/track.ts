import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { api } from '../openapi/spec.ts';
import { AwbParam, carrierParam } from '../openapi/schemas.ts';
import { z } from 'zod';
import { TrackingRecordSchema } from '../../../lib/schemas/index.ts';
import { checkShipmentInput, meteredLookup, type LookupDeps } from '../lookup/metered.ts';


/** GET /v1/track/:carrier/:awb. Only 200 and 404 answers consume a lookup (lookup/metered.ts). */
export function registerTrackRoutes(app: FastifyInstance, deps: LookupDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply: FastifyReply) => {
    const { carrier, awb, result } = await meteredLookup(deps, request, reply, checkShipmentInput(deps, request.params.carrier, request.params.awb));
    if (result.kind === 'not_found') {
      throw new ApiError('shipment_not_found', `No tracking scans exist for ${carrier} consignment ${awb}.`);
    }
    // The record's JSON, its cached part written once per cache entry (lib/insights/json.ts).
    return reply.type('application/json; charset=utf-8').send(result.json());
  };

  // No HEAD: it would be metered like a GET and answer no record for it (issue 13).
  app.get('/v1/track/:carrier/:awb', {
    exposeHeadRoute: false,
    ...api({
      operationId: 'track', summary: 'Track a shipment', caller: 'key', limits: 'metered',
      description: 'The tracking record, from cache or live (stale when the carrier is down). Answers 200 and 404 consume one lookup.',
      params: z.object({ carrier: carrierParam(deps.product), awb: AwbParam }),
      // The answer is sent as prepared bytes (lib/insights/json.ts); this schema describes them.
      responses: { 200: { description: 'The tracking record', schema: TrackingRecordSchema } },
      errors: ['invalid_awb', 'unsupported_carrier', 'shipment_not_found', 'daily_quota_exceeded', 'plan_quota_exceeded', 'upstream_error'],
    }),
  }, handler);
  methodNotAllowed(app, '/v1/track/:carrier/:awb', ['GET'], { refuseHead: true });
}
