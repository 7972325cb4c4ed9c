import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isPincode } from '../../../lib/lanes/index.ts';
import { shipDateProblem, type EstimateAnswer } from '../../../lib/prediction/index.ts';
import { istDayOf } from '../../../lib/time/ist-day.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { countLookup } from '../lookup/metered.ts';
import { api } from '../openapi/spec.ts';
import { EstimateAnswerSchema, EstimateQuerySchema, PincodeParam } from '../openapi/schemas.ts';

/** What these routes use of the API's dependencies. */
type EstimateDeps = Pick<ApiDeps, 'access' | 'clock' | 'estimator' | 'metrics' | 'product' | 'tracking'>;

/** Longer than any carrier's name of a service: refused rather than carried around. */
const MAX_SERVICE_TYPE = 60;

interface EstimateInput {
  origin: string;
  destination: string;
  shipDate: string;
  carrier: string | null;
  serviceType: string | null;
}

/** A query parameter given once; a repeated one is not a value this route can read. */
function single(value: unknown): string | undefined | null {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value.trim() : null;
}

/** The request's input checked, or the 400 it deserves (pincodes first, then the date, the carrier, the service type). */
function checkInput(
  deps: EstimateDeps,
  request: FastifyRequest<{ Params: { origin_pincode: string; destination_pincode: string } }>,
): EstimateInput | ApiError {
  const origin = request.params.origin_pincode.trim();
  const destination = request.params.destination_pincode.trim();
  if (!isPincode(origin) || !isPincode(destination)) {
    return new ApiError('invalid_pincode', 'Origin and destination must be Indian pincodes of exactly 6 digits.');
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  const nowMs = deps.clock();
  const date = single(query.ship_date);
  if (date === null) return new ApiError('invalid_date', 'Give ship_date once, as YYYY-MM-DD.');
  // Absent or empty: today in India, where the parcel is handed over.
  const shipDate = date === undefined || date === '' ? istDayOf(nowMs) : date;
  const dateProblem = shipDateProblem(shipDate, nowMs);
  if (dateProblem) return new ApiError('invalid_date', dateProblem);
  const carrierName = single(query.carrier);
  if (carrierName === null) return new ApiError('unsupported_carrier', 'Give carrier once: one slug or alias (GET /v1/carriers lists them).');
  // Absent or empty: every carrier.
  const carrier = carrierName ? deps.product.registry.resolve(carrierName) : null;
  if (carrierName && !carrier) {
    return new ApiError('unsupported_carrier', `Carrier ${JSON.stringify(carrierName.slice(0, 60))} is not supported. See GET /v1/carriers for the list.`);
  }
  const service = single(query.service_type);
  if (service === null || (service !== undefined && service.length > MAX_SERVICE_TYPE)) {
    return new ApiError('bad_request', `service_type must be given once, at most ${MAX_SERVICE_TYPE} characters.`);
  }
  return { origin, destination, shipDate, carrier, serviceType: service || null };
}

/**
 * GET /v1/estimate/:origin_pincode/:destination_pincode (contracts.md "Delivery prediction"):
 * "delivery by" for a planned shipment, per carrier and service type, from the same model as a
 * record's prediction in its booked stage (lib/prediction/estimate.ts). Metered exactly like a
 * track call answered 200 (routes/lanes.ts, the same access step): one lookup per 200, none for a
 * refusal, the lookup given back if the answer fails. trk_test_ keys read the model learned from the
 * sandbox network, live keys the one learned from real carriers.
 */
export function registerEstimateRoutes(app: FastifyInstance, deps: EstimateDeps): void {
  const handler = async (request: FastifyRequest<{ Params: { origin_pincode: string; destination_pincode: string } }>, reply: FastifyReply) => {
    const input = checkInput(deps, request);
    const { key: record, ticket } = await countLookup(deps, request, reply, input instanceof ApiError ? input : null);
    const { origin, destination, shipDate, carrier, serviceType } = input as EstimateInput;
    try {
      const request = { mode: record.mode, originPincode: origin, destinationPincode: destination, shipDate, carrier, serviceType, nowMs: deps.clock() };
      const answer: EstimateAnswer = deps.estimator?.estimate(request)
        ?? { origin_pincode: origin, destination_pincode: destination, ship_date: shipDate, estimates: [], fastest: null };
      return answer;
    } catch (err) {
      // Not answered 200: the lookup is given back, as for a track call that fails.
      await deps.access.refund(ticket);
      throw err;
    }
  };
  // No HEAD: it would be metered like a GET and show nothing for it (as for a track call).
  app.get('/v1/estimate/:origin_pincode/:destination_pincode', { exposeHeadRoute: false, ...api({
    operationId: 'estimate', summary: 'Delivery by: estimate a planned shipment per carrier', caller: 'key', limits: 'metered',
    description: 'The delivery day and its p80 / p90 windows (IST days, both ends included) of a shipment booked on ship_date and not yet picked up, '
      + 'per carrier and service type, from the same model as a tracking record\'s insights.prediction in its awaiting_pickup stage. '
      + 'Pickups count only on the carrier\'s working days at the origin (the first one on or after ship_date; '
      + 'today: from now, a later day: from its start), deliveries only on working days at the destination. '
      + 'Carriers without a basis (under 30 delivered shipments for the stage at every level) are left out, and so is a carrier '
      + 'that delivered nothing into the destination\'s state within the model\'s window (the network\'s own deliveries show who serves where). '
      + 'fastest is chosen only among estimates whose basis.level is lane or state_pair (null when none is). '
      + 'trk_test_ keys read the model learned from the sandbox network, live keys the one learned from real carriers. '
      + 'One lookup, like a track call answered 200.',
    params: z.object({ origin_pincode: PincodeParam, destination_pincode: PincodeParam }),
    query: EstimateQuerySchema,
    responses: { 200: { description: 'The estimates', schema: EstimateAnswerSchema } },
    errors: ['invalid_pincode', 'invalid_date', 'unsupported_carrier', 'bad_request', 'daily_quota_exceeded', 'plan_quota_exceeded'],
  }) }, handler);
  methodNotAllowed(app, '/v1/estimate/:origin_pincode/:destination_pincode', ['GET'], { refuseHead: true });
}
