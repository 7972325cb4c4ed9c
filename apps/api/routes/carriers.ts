import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate } from '../auth/api-key.ts';
import { checkAwb } from '../lookup/awb-input.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { api } from '../openapi/spec.ts';
import { AwbParam, CarrierListSchema, DetectAnswerSchema } from '../openapi/schemas.ts';
import { z } from 'zod';

/** What these routes use of the API's dependencies. */
type CarrierDeps = Pick<ApiDeps, 'access' | 'clock' | 'product'>;

/**
 * GET /v1/carriers (no key: it is the catalogue) and GET /v1/carriers/detect/:awb (a key, no lookup
 * consumed: it asks no carrier, only the shapes and their measured confidence).
 */
export function registerCarrierRoutes(app: FastifyInstance, deps: CarrierDeps): void {
  const catalogue = {
    carriers: deps.product.config.carriers.map((c) => ({ slug: c.slug, name: c.name, aliases: c.aliases, example_awb: c.example_awb ?? null })),
  };
  app.get('/v1/carriers', api({
    operationId: 'listCarriers', summary: 'The supported carriers', caller: 'none',
    responses: { 200: { description: 'Every carrier with its aliases and an example number', schema: CarrierListSchema } },
    errors: [],
  }), async () => catalogue);
  methodNotAllowed(app, '/v1/carriers', ['GET']);

  app.get('/v1/carriers/detect/:awb', api({
    operationId: 'detectCarrier', summary: 'Which carriers a number may belong to', caller: 'key', description: 'Asks no carrier and consumes no lookup.',
    params: z.object({ awb: AwbParam }),
    responses: { 200: { description: 'Candidates, most likely first', schema: DetectAnswerSchema } },
    errors: ['invalid_awb'],
  }), async (request: FastifyRequest<{ Params: { awb: string } }>) => {
    await authenticate(request, deps.access, new Date(deps.clock()));
    const awb = checkAwb(request.params.awb);
    if (awb instanceof ApiError) throw awb;
    // No fitting shape is an answer here (an empty list), not an error: the question was "which?".
    return { candidates: deps.product.detector.detect(awb).candidates };
  });
  methodNotAllowed(app, '/v1/carriers/detect/:awb', ['GET']);
}
