import type { Product } from '../../lib/product/index.ts';

/**
 * OpenAPI of batch lookups and carrier detection (contracts.md "Batch lookups and carrier
 * detection"), merged into openapi.ts's document. The record schema is the TrackingRecord component.
 */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ref('ErrorBody') } } });
const limitHeaders = {
  'RateLimit-Limit': { schema: { type: 'integer' } }, 'RateLimit-Remaining': { schema: { type: 'integer' } },
  'RateLimit-Reset': { schema: { type: 'integer' } }, 'X-Lookups-Remaining': { schema: { type: 'integer' } },
  'X-Request-Id': { schema: { type: 'string' } },
};
const awbParam = {
  name: 'awb', in: 'path', required: true,
  description: 'Consignment number, 4 to 40 of [A-Za-z0-9-]; the carrier is detected from its shape.',
  schema: { type: 'string', minLength: 4, maxLength: 40, pattern: '^[A-Za-z0-9-]+$' },
};

export const BATCH_SCHEMAS = {
  BatchRequest: {
    type: 'object', required: ['items'],
    properties: {
      items: {
        type: 'array', minItems: 1, maxItems: 100,
        items: {
          type: 'object', required: ['awb'],
          properties: {
            carrier: { type: 'string', description: 'Slug or alias; omit to detect the carrier from the number' },
            awb: { type: 'string' },
          },
        },
      },
    },
  },
  BatchResult: {
    oneOf: [
      {
        type: 'object', required: ['index', 'status', 'tracking'],
        properties: { index: { type: 'integer', minimum: 0 }, status: { const: 200 }, tracking: ref('TrackingRecord') },
      },
      {
        type: 'object', required: ['index', 'status', 'error'],
        properties: {
          index: { type: 'integer', minimum: 0 },
          status: { enum: [400, 404, 429, 502] },
          error: {
            type: 'object', required: ['code', 'message'],
            properties: {
              code: { enum: ['invalid_awb', 'unsupported_carrier', 'carrier_not_detected', 'shipment_not_found', 'daily_quota_exceeded', 'plan_quota_exceeded', 'upstream_error'] },
              message: { type: 'string' },
            },
          },
        },
      },
    ],
  },
  BatchResponse: { type: 'object', required: ['results'], properties: { results: { type: 'array', items: ref('BatchResult') } } },
  CarrierList: {
    type: 'object', required: ['carriers'],
    properties: {
      carriers: {
        type: 'array',
        items: {
          type: 'object', required: ['slug', 'name', 'aliases', 'example_awb'],
          properties: { slug: { type: 'string' }, name: { type: 'string' }, aliases: { type: 'array', items: { type: 'string' } }, example_awb: { type: 'string', description: 'A number of this carrier\'s shape; the sandbox (trk_test_ keys) answers it' } },
        },
      },
    },
  },
  DetectResponse: {
    type: 'object', required: ['candidates'],
    properties: {
      candidates: {
        type: 'array', description: 'Carriers whose shapes fit, most likely first (empty: none fits)',
        items: {
          type: 'object', required: ['slug', 'name', 'confidence'],
          properties: {
            slug: { type: 'string' }, name: { type: 'string' },
            confidence: { type: 'number', minimum: 0, maximum: 1, description: 'Share of this carrier among the sample of real-shaped numbers of the same shape (README "Carrier auto-detection")' },
          },
        },
      },
    },
  },
};

export function lookupPaths(product: Product): Record<string, unknown> {
  const example = product.config.carriers.find((c) => c.slug === 'delhivery')?.example_awb ?? '1234567890102';
  return {
    '/v1/track/batch': {
      post: {
        summary: 'Track 1 to 100 shipments in one request',
        operationId: 'trackBatch',
        description: 'One result per item, in input order, each with its index. Each item is metered as a single lookup would be (200 and 404 consume; 400, 429 and 502 do not); '
          + 'items past the daily or period quota get that quota\'s 429 code while the ones before it are served. The batch is one request for the burst limit. '
          + 'Items without a carrier are detected as GET /v1/track/{awb} does. Identical items share one carrier poll.',
        parameters: [{
          name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
          description: 'The same key and body within 24 h returns the first answer (header Idempotent-Replayed: true) and consumes nothing; another body → 422 idempotency_key_reused. Scoped to the API key.',
        }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('BatchRequest'), example: { items: [{ carrier: 'delhivery', awb: example }, { awb: '12345670104' }] } } },
        },
        responses: {
          200: { description: 'One result per item', headers: limitHeaders, content: { 'application/json': { schema: ref('BatchResponse') } } },
          400: errorResponse('bad_request: not {"items": [...]} with 1 to 100 objects, or a malformed Idempotency-Key'),
          401: errorResponse('missing_api_key or invalid_api_key'),
          402: errorResponse('payment_required: the plan period has ended'),
          409: errorResponse('conflict: a request with this Idempotency-Key is still being answered'),
          422: errorResponse('idempotency_key_reused: the key was used with another body in the last 24 h'),
          429: errorResponse('rate_limit_exceeded: the batch is past the burst limit (Retry-After: 1)'),
        },
      },
    },
    '/v1/track/{awb}': {
      get: {
        summary: 'Track a shipment without naming the carrier',
        operationId: 'trackDetected',
        description: 'The carriers whose number shapes fit are asked in turn, most likely first, at most 3 carrier polls, until one knows the number; one lookup is consumed whatever the number of polls. '
          + 'The record\'s carrier says which; it is cached under that carrier.',
        parameters: [awbParam],
        responses: {
          200: { description: 'The tracking record', headers: limitHeaders, content: { 'application/json': { schema: ref('TrackingRecord') } } },
          400: errorResponse('invalid_awb, or carrier_not_detected: no carrier uses numbers of this shape'),
          401: errorResponse('missing_api_key or invalid_api_key'),
          402: errorResponse('payment_required'),
          404: errorResponse('shipment_not_found: none of the carriers asked knows it (consumes a lookup)'),
          429: errorResponse('rate_limit_exceeded, daily_quota_exceeded or plan_quota_exceeded'),
          502: errorResponse('upstream_error: a carrier asked was unreachable and no other knows the number'),
        },
      },
    },
    '/v1/carriers': {
      get: {
        summary: 'The supported carriers', operationId: 'listCarriers', security: [],
        responses: { 200: { description: 'Every carrier with its aliases and an example number', content: { 'application/json': { schema: ref('CarrierList') } } } },
      },
    },
    '/v1/carriers/detect/{awb}': {
      get: {
        summary: 'Which carriers a number may belong to', operationId: 'detectCarrier',
        description: 'Asks no carrier and consumes no lookup.',
        parameters: [awbParam],
        responses: {
          200: { description: 'Candidates, most likely first', content: { 'application/json': { schema: ref('DetectResponse') } } },
          400: errorResponse('invalid_awb'),
          401: errorResponse('missing_api_key or invalid_api_key'),
        },
      },
    },
  };
}
