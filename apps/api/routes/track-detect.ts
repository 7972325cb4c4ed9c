import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { trackingRecordJson } from '../../../lib/insights/index.ts';
import { answerMessage, detectedLookup } from '../carrier-lookup.ts';
import { checkAwb, detectionFor } from '../awb-input.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';
import { countLookup } from '../metered-lookup.ts';

/**
 * GET /v1/track/:awb: a lookup without a carrier (contracts.md). The candidates are asked in turn
 * (at most 3 carrier polls) and one lookup is consumed whatever their number; 400, 429 and 502
 * consume nothing, as for a named carrier.
 */
export function registerDetectedTrackRoute(app: FastifyInstance, deps: ApiDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { awb: string } }>, reply: FastifyReply) => {
    // `/v1/track/delhivery` is a carrier without its number, not a number: no such resource.
    if (deps.product.registry.resolve(request.params.awb)) {
      throw new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}: add the consignment number, /v1/track/{carrier}/{awb}.`);
    }
    const awb = checkAwb(request.params.awb);
    const detection = awb instanceof ApiError ? awb : detectionFor(deps, awb);
    const counted = await countLookup(deps, request, reply, detection instanceof ApiError ? detection : null);
    const number = awb as string;
    const candidates = detection instanceof ApiError ? [] : detection.candidates;

    let answer;
    try {
      answer = await detectedLookup(deps, candidates, number, counted.key.mode);
    } catch (err) {
      await deps.access.refund(counted.ticket);
      throw err;
    }
    if (answer.kind === 'found') {
      return reply.type('application/json; charset=utf-8').send(trackingRecordJson(answer.result.record, answer.result.base));
    }
    if (answer.kind === 'upstream_error') {
      // A 502 consumes nothing (decisions.md): give the lookup back.
      await deps.access.refund(counted.ticket);
      reply.header('X-Lookups-Remaining', counted.remaining + 1);
      throw new ApiError('upstream_error', answerMessage(answer, number, true));
    }
    throw new ApiError('shipment_not_found', answerMessage(answer, number, true));
  };

  app.get('/v1/track/:awb', handler);
  methodNotAllowed(app, '/v1/track/:awb', ['GET']);
}
