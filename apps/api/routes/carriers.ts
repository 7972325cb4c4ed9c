import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate } from '../auth.ts';
import { checkAwb } from '../awb-input.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';

/**
 * GET /v1/carriers (no key: it is the catalogue) and GET /v1/carriers/detect/:awb (a key, no lookup
 * consumed: it asks no carrier, only the shapes and their measured confidence).
 */
export function registerCarrierRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const catalogue = {
    carriers: deps.product.config.carriers.map((c) => ({ slug: c.slug, name: c.name, aliases: c.aliases, example_awb: c.example_awb ?? null })),
  };
  app.get('/v1/carriers', async () => catalogue);
  methodNotAllowed(app, '/v1/carriers', ['GET']);

  app.get('/v1/carriers/detect/:awb', async (request: FastifyRequest<{ Params: { awb: string } }>) => {
    await authenticate(request, deps.access, new Date(deps.clock()));
    const awb = checkAwb(request.params.awb);
    if (awb instanceof ApiError) throw awb;
    // No fitting shape is an answer here (an empty list), not an error: the question was "which?".
    return { candidates: deps.product.detector.detect(awb).candidates };
  });
  methodNotAllowed(app, '/v1/carriers/detect/:awb', ['GET']);
}
