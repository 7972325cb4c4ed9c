import { z } from 'zod';
import type { Product } from '../../lib/product/index.ts';
import { ErrorBodySchema, TrackingRecordSchema, UsageRecordSchema } from '../../lib/schemas/index.ts';

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any' });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ref('ErrorBody') } } });

/** OpenAPI 3.1 of the public API, generated from the same zod schemas the service validates with. */
export function buildOpenApi(product: Product): Record<string, unknown> {
  const carriers = product.registry.list();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shipment tracking API for Indian couriers',
      version: '1.0.0',
      description: 'One GET tracks a consignment of any supported carrier and answers one uniform JSON document. Every /v1/track call that is answered 200 or 404 consumes one lookup.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'trk_live_… or trk_test_… (sandbox carriers) key.' },
      },
      schemas: { TrackingRecord: json(TrackingRecordSchema), UsageRecord: json(UsageRecordSchema), ErrorBody: json(ErrorBodySchema) },
    },
    security: [{ ApiKey: [] }],
    paths: {
      '/v1/track/{carrier}/{awb}': {
        get: {
          summary: 'Track a shipment',
          operationId: 'track',
          parameters: [
            {
              name: 'carrier', in: 'path', required: true,
              description: `Canonical slug or alias: ${carriers.map((c) => [c.slug, ...c.aliases].join(' | ')).join('; ')}`,
              schema: { type: 'string', enum: carriers.flatMap((c) => [c.slug, ...c.aliases]) },
            },
            { name: 'awb', in: 'path', required: true, description: 'Consignment number (alias name: tracking_number); 4 to 40 of [A-Za-z0-9-].', schema: { type: 'string', minLength: 4, maxLength: 40, pattern: '^[A-Za-z0-9-]+$' } },
          ],
          responses: {
            200: {
              description: 'The tracking record (from cache or live; stale when the carrier is down).',
              headers: {
                'RateLimit-Limit': { schema: { type: 'integer' } }, 'RateLimit-Remaining': { schema: { type: 'integer' } },
                'RateLimit-Reset': { schema: { type: 'integer' } }, 'X-Lookups-Remaining': { schema: { type: 'integer' } },
                'X-Request-Id': { schema: { type: 'string' } },
              },
              content: { 'application/json': { schema: ref('TrackingRecord') } },
            },
            400: errorResponse('invalid_awb or unsupported_carrier'),
            401: errorResponse('missing_api_key or invalid_api_key'),
            402: errorResponse('payment_required: the plan period has ended'),
            404: errorResponse('shipment_not_found (consumes a lookup)'),
            429: errorResponse('rate_limit_exceeded, daily_quota_exceeded or plan_quota_exceeded (Retry-After where it helps)'),
            502: errorResponse('upstream_error: carrier unreachable and nothing cached'),
          },
        },
      },
      '/v1/usage': {
        get: {
          summary: "The caller's plan, period and remaining lookups",
          operationId: 'usage',
          responses: {
            200: { description: 'Usage record', content: { 'application/json': { schema: ref('UsageRecord') } } },
            401: errorResponse('missing_api_key or invalid_api_key'),
          },
        },
      },
    },
  };
}
