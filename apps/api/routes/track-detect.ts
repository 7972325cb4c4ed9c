import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answerMessage, detectedLookup } from '../lookup/carriers.ts';
import { checkAwb, detectionFor } from '../lookup/awb-input.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { countLookup } from '../lookup/metered.ts';
import { api } from '../openapi/spec.ts';
import { AwbParam } from '../openapi/schemas.ts';
import { z } from 'zod';
import { TrackingRecordSchema } from '../../../lib/schemas/index.ts';

/** What these routes use of the API's dependencies. */
type DetectedTrackDeps = Pick<ApiDeps, 'access' | 'clock' | 'metrics' | 'product' | 'tracking'>;

/**
 * GET /v1/track/:awb: a lookup without a carrier (contracts.md). The candidates are asked in turn
 * (at most 3 carrier polls) and one lookup is consumed whatever their number; 400, 429 and 502
 * consume nothing, as for a named carrier.
 */
export function registerDetectedTrackRoute(app: FastifyInstance, deps: DetectedTrackDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { awb: string } }>, reply: FastifyReply) => {
    // `/v1/track/delhivery` is a carrier without its number, not a number: no such resource.
    if (deps.product.registry.resolve(request.params.awb)) {
      throw new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}: add the consignment number, /v1/track/{carrier}/{awb}.`);
    }
    const awb = checkAwb(request.params.awb);
    const detection = awb instanceof ApiError ? awb : detectionFor(deps, awb);
    const counted = await countLookup(deps, request, reply, detection instanceof ApiError ? detection : null);
    // countLookup has thrown a bad input after the key checks; this says so to the compiler.
    if (detection instanceof ApiError) throw detection;
    const { awb: number, candidates } = detection;

    let answer;
    try {
      answer = await detectedLookup(deps, candidates, number, counted.key.mode);
    } catch (err) {
      await deps.access.refund(counted.ticket);
      throw err;
    }
    if (answer.kind === 'found') {
      return reply.type('application/json; charset=utf-8').send(answer.result.json());
    }
    if (answer.kind === 'upstream_error') {
      // A 502 consumes nothing (decisions.md): give the lookup back.
      await deps.access.refund(counted.ticket);
      reply.header('X-Lookups-Remaining', counted.remaining + 1);
      throw new ApiError('upstream_error', answerMessage(answer, number, true));
    }
    throw new ApiError('shipment_not_found', answerMessage(answer, number, true));
  };

  app.get('/v1/track/:awb', api({
    operationId: 'trackDetected', summary: 'Track a shipment without naming the carrier', caller: 'key', limits: 'metered',
    description: 'The carriers whose number shapes fit are asked in turn, most likely first, at most 3 carrier polls, until one knows the number; '
      + 'one lookup is consumed whatever the number of polls. '
      + 'The record\'s carrier says which; it is cached under that carrier.',
    params: z.object({ awb: AwbParam }),
    responses: { 200: { description: 'The tracking record', schema: TrackingRecordSchema } },
    errors: ['invalid_awb', 'carrier_not_detected', 'not_found', 'shipment_not_found', 'daily_quota_exceeded', 'plan_quota_exceeded', 'upstream_error'],
  }), handler);
  methodNotAllowed(app, '/v1/track/:awb', ['GET']);
}
