import { z } from 'zod';
import type { Product } from '../../lib/product/index.ts';
import { ErrorBodySchema, TrackingRecordSchema, UsageRecordSchema } from '../../lib/schemas/index.ts';
import { ANALYSIS_SCHEMAS, analysisPaths } from './openapi-analyses.ts';
import { BATCH_SCHEMAS, lookupPaths } from './openapi-lookups.ts';

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any' });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ref('ErrorBody') } } });

const rate = { type: ['number', 'null'], minimum: 0, maximum: 1 };
/** GET /v1/lanes's answer (lib/lanes/compare.ts LaneComparison). */
const LANE_COMPARISON_SCHEMA = {
  type: 'object',
  required: ['origin_prefix', 'destination_prefix', 'window_days', 'carriers', 'fastest', 'most_reliable'],
  properties: {
    origin_prefix: { type: 'string', pattern: '^[0-9]{3}$' },
    destination_prefix: { type: 'string', pattern: '^[0-9]{3}$' },
    window_days: { type: 'integer', minimum: 1 },
    carriers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['carrier', 'sample_size', 'p50_transit_days', 'p90_transit_days', 'on_time_rate', 'first_attempt_rate', 'rto_rate', 'ndr_reasons'],
        properties: {
          carrier: { type: 'string' },
          sample_size: { type: 'integer', minimum: 0, description: 'Delivered shipments in the window' },
          p50_transit_days: { type: ['number', 'null'] },
          p90_transit_days: { type: ['number', 'null'] },
          on_time_rate: { ...rate, description: 'Delivered by the carrier EDD, of deliveries that had one' },
          first_attempt_rate: { ...rate, description: 'Delivered with no failed attempt first' },
          rto_rate: { ...rate, description: 'Returned to origin, of delivered + returned' },
          ndr_reasons: { type: ['object', 'null'], additionalProperties: { type: 'number' }, description: 'Reason code → share of failed attempts' },
        },
      },
    },
    fastest: { type: ['string', 'null'], description: 'Lowest p50 among carriers with figures' },
    most_reliable: { type: ['string', 'null'], description: 'Highest on-time rate among carriers with figures' },
  },
};

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
      schemas: { TrackingRecord: json(TrackingRecordSchema), UsageRecord: json(UsageRecordSchema), ErrorBody: json(ErrorBodySchema), LaneComparison: LANE_COMPARISON_SCHEMA, ...BATCH_SCHEMAS, ...ANALYSIS_SCHEMAS },
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
      ...lookupPaths(product),
      ...pushPaths(),
      ...analysisPaths(),
      '/v1/lanes/{origin_pincode}/{destination_pincode}': {
        get: {
          summary: 'Compare carriers on a lane',
          operationId: 'lanes',
          description: 'Every carrier\'s figures on the lane of the two pincodes\' first three digits, over shipments closed in the last window_days (default 90). '
            + 'Figures are null for a carrier with fewer than 30 delivered shipments in the window; rates are null when nothing could be counted. '
            + 'p50 is the median (mean of the middle two), p90 interpolates at rank 0.9·(n−1). trk_test_ keys see the sandbox\'s lanes. One lookup, like a track call answered 200.',
          parameters: [
            { name: 'origin_pincode', in: 'path', required: true, description: '6-digit Indian pincode', schema: { type: 'string', pattern: '^[0-9]{6}$' } },
            { name: 'destination_pincode', in: 'path', required: true, description: '6-digit Indian pincode', schema: { type: 'string', pattern: '^[0-9]{6}$' } },
          ],
          responses: {
            200: {
              description: 'The lane comparison',
              headers: { 'X-Lookups-Remaining': { schema: { type: 'integer' } }, 'X-Request-Id': { schema: { type: 'string' } } },
              content: { 'application/json': { schema: ref('LaneComparison') } },
            },
            400: errorResponse('invalid_pincode: not 6 digits'),
            401: errorResponse('missing_api_key or invalid_api_key'),
            402: errorResponse('payment_required: the plan period has ended'),
            429: errorResponse('rate_limit_exceeded, daily_quota_exceeded or plan_quota_exceeded'),
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

const jsonBody = (properties: Record<string, unknown>, required: string[], example: unknown) => ({
  required: true,
  content: { 'application/json': { schema: { type: 'object', properties, required }, example } },
});
const ok = (description: string, example?: unknown) => ({ description, content: { 'application/json': { schema: { type: 'object' }, ...(example ? { example } : {}) } } });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^wh_' } };
const EVENT_TYPES = ['tracking.delivered', 'tracking.rto', 'tracking.exception', 'tracking.out_for_delivery', 'tracking.stuck', 'tracking.updated', 'analysis.completed'];
const WATCH_EXAMPLE = { carrier: 'delhivery', awb: '1234567890125', status: 'active', watched_since: '2026-11-23T10:00:00.000Z', expires_at: '2027-01-22T10:00:00.000Z' };

/** Watches and webhooks (contracts.md "Push"): management calls consume no lookups. */
function pushPaths(): Record<string, unknown> {
  const tags = ['Push'];
  return {
    '/v1/trackings': {
      post: {
        tags, summary: 'Watch a shipment (consumes one lookup; watching again is free)', operationId: 'watch',
        description: 'Starts pushing every change of the shipment to the key\'s webhook endpoints. Consumes one lookup exactly as a track call answered 200 or 404 would. A watch ends 3 days after a terminal state or 60 days after it began.',
        requestBody: jsonBody({ carrier: { type: 'string' }, awb: { type: 'string' } }, ['carrier', 'awb'], { carrier: 'delhivery', awb: '1234567890125' }),
        responses: {
          201: ok('Watch started: { watch, tracking } (tracking null while the carrier has no scans)', { watch: WATCH_EXAMPLE, tracking: null }),
          200: ok('Already watched by this key: nothing consumed'),
          400: errorResponse('invalid_awb, unsupported_carrier or bad_request'), 401: errorResponse('missing_api_key or invalid_api_key'),
          402: errorResponse('payment_required'), 429: errorResponse('a limit or quota'), 502: errorResponse('upstream_error (nothing consumed, no watch)'),
        },
      },
      get: {
        tags, summary: 'List the key\'s watches (cursor-paged)', operationId: 'listWatches',
        parameters: [{ name: 'cursor', in: 'query', schema: { type: 'string' } }, { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } }],
        responses: { 200: ok('{ watches: [watch], next_cursor }', { watches: [WATCH_EXAMPLE], next_cursor: null }), 401: errorResponse('missing_api_key or invalid_api_key') },
      },
    },
    '/v1/trackings/{carrier}/{awb}': {
      parameters: [{ name: 'carrier', in: 'path', required: true, schema: { type: 'string' } }, { name: 'awb', in: 'path', required: true, schema: { type: 'string' } }],
      get: { tags, summary: 'One watch', operationId: 'getWatch', responses: { 200: ok('{ watch }'), 404: errorResponse('not_found') } },
      delete: { tags, summary: 'End a watch', operationId: 'deleteWatch', responses: { 204: { description: 'Ended' }, 404: errorResponse('not_found') } },
    },
    '/v1/webhooks': {
      post: {
        tags, summary: 'Create a webhook endpoint (the secret is shown only here)', operationId: 'createWebhook',
        description: `Deliveries are signed with Standard Webhooks v1 (webhook-id, webhook-timestamp, webhook-signature). Live keys need https and a host with public addresses only; test keys may use http and loopback. At most 10 endpoints per key. Event types: ${EVENT_TYPES.join(', ')}.`,
        requestBody: jsonBody({ url: { type: 'string', format: 'uri' }, events: { type: 'array', items: { type: 'string', enum: EVENT_TYPES } }, description: { type: 'string', maxLength: 256 } }, ['url'], { url: 'https://example.com/hooks/tracking', events: ['tracking.delivered', 'tracking.exception'] }),
        responses: {
          201: ok('The endpoint with its secret (whsec_…)', { id: 'wh_…', url: 'https://example.com/hooks/tracking', events: ['tracking.delivered'], status: 'enabled', secret: 'whsec_…', created_at: '2026-11-23T10:00:00.000Z' }),
          400: errorResponse('invalid_url or bad_request'), 409: errorResponse('too_many_endpoints'),
        },
      },
      get: { tags, summary: 'List endpoints (no secrets)', operationId: 'listWebhooks', responses: { 200: ok('{ webhooks: [endpoint] }') } },
    },
    '/v1/webhooks/{id}': {
      parameters: [idParam],
      get: { tags, summary: 'One endpoint', operationId: 'getWebhook', responses: { 200: ok('The endpoint (status enabled|disabled, disabled_reason gone|failing)'), 404: errorResponse('not_found') } },
      delete: { tags, summary: 'Delete an endpoint', operationId: 'deleteWebhook', responses: { 204: { description: 'Deleted' }, 404: errorResponse('not_found') } },
    },
    '/v1/webhooks/{id}/rotate-secret': { parameters: [idParam], post: { tags, summary: 'New secret; the old one keeps signing for 24 h', operationId: 'rotateWebhookSecret', responses: { 200: ok('{ id, secret, previous_secret_valid_until }'), 404: errorResponse('not_found') } } },
    '/v1/webhooks/{id}/enable': { parameters: [idParam], post: { tags, summary: 'Enable again; kept events (7 days) are sent in order', operationId: 'enableWebhook', responses: { 200: ok('The endpoint'), 404: errorResponse('not_found') } } },
    '/v1/webhooks/{id}/test': { parameters: [idParam], post: { tags, summary: 'Send a webhook.test event', operationId: 'testWebhook', responses: { 202: ok('{ event_id, type }'), 404: errorResponse('not_found') } } },
    '/v1/webhooks/{id}/deliveries': {
      parameters: [idParam],
      get: { tags, summary: 'Latest delivery attempts', operationId: 'listWebhookDeliveries', parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } }], responses: { 200: ok('{ deliveries: [{ event_id, type, attempt, status_code, latency_ms, error, attempted_at, next_attempt_at }] }') } },
    },
    '/v1/webhooks/{id}/deliveries/{event_id}/resend': {
      parameters: [idParam, { name: 'event_id', in: 'path', required: true, schema: { type: 'string' } }],
      post: { tags, summary: 'Send a kept event again (same webhook-id)', operationId: 'resendWebhookEvent', responses: { 202: ok('{ event_id, type }'), 404: errorResponse('not_found') } },
    },
  };
}
