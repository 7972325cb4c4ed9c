import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EndpointError, endpointView, ROTATION_OVERLAP_MS, testEvent, type Push } from '../../../lib/push/index.ts';
import { WebhookBodySchema, readBody } from '../http/bodies.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { managementKey } from '../auth/management-key.ts';
import { api, type RouteSpec } from '../openapi/spec.ts';
import {
  DeliveriesSchema, EndpointIdParams, EndpointListSchema, EndpointSchema, EndpointWithSecretSchema, LimitQuerySchema,
  RotatedSecretSchema, SentEventSchema,
} from '../openapi/schemas.ts';
import { z } from 'zod';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../../lib/push/index.ts';

/** What these routes use of the API's dependencies. */
type WebhookDeps = Pick<ApiDeps, 'access' | 'clock'>;

/** What every webhook call shares: a key, its burst limit, the Push tag. */
const pushCall = (spec: Omit<RouteSpec, 'caller' | 'limits' | 'tags'>) => api({ ...spec, caller: 'key', limits: 'burst', tags: ['Push'] });
/** The calls on one endpoint: 404 when it is not the key's. */
const onEndpoint = (spec: Omit<RouteSpec, 'caller' | 'limits' | 'tags' | 'errors' | 'params'> & { errors?: RouteSpec['errors']; params?: z.ZodObject }) =>
  pushCall({ params: EndpointIdParams, ...spec, errors: ['not_found', ...(spec.errors ?? [])] });

type WithId = FastifyRequest<{ Params: { id: string } }>;

/**
 * Webhook endpoints (contracts.md "Push"). Every call is the key's own: an id of another key's
 * endpoint answers 404, exactly like one that does not exist.
 */
export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookDeps, push: Push): void {
  const endpointOf = async (request: WithId, reply: FastifyReply) => {
    const key = await managementKey(deps, push.kv, request, reply);
    const endpoint = await push.endpoints.get(key.prefix, request.params.id);
    if (!endpoint) throw new ApiError('not_found', `No webhook endpoint ${request.params.id} for this key.`);
    return { key, endpoint };
  };

  app.post('/v1/webhooks', pushCall({
    operationId: 'createWebhook', summary: 'Create a webhook endpoint (the secret is shown only here)',
    description: `Deliveries are signed with Standard Webhooks v1 (webhook-id, webhook-timestamp, webhook-signature). `
      + `Live keys need https and a host with public addresses only; test keys may use http and loopback. `
      + `At most 10 endpoints per key. Event types: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}.`,
    body: WebhookBodySchema, bodyExample: { url: 'https://example.com/hooks/tracking', events: ['tracking.delivered', 'tracking.exception'] },
    responses: { 201: { description: 'The endpoint with its secret (whsec_…)', schema: EndpointWithSecretSchema } },
    errors: ['invalid_url', 'too_many_endpoints'],
  }), async (request, reply) => {
    const key = await managementKey(deps, push.kv, request, reply);
    const body = readBody(WebhookBodySchema, request.body, '{"url": "https://example.com/hooks/tracking"}');
    if (body instanceof ApiError) throw body;
    try {
      const { endpoint, secret } = await push.endpoints.create(key.prefix, key.mode, body, deps.clock());
      return reply.code(201).send({ ...endpoint, secret });
    } catch (err) {
      if (!(err instanceof EndpointError)) throw err;
      if (err.reason === 'too_many_endpoints') throw new ApiError('too_many_endpoints', err.message);
      throw new ApiError(err.reason === 'invalid_url' ? 'invalid_url' : 'bad_request', err.message);
    }
  });

  app.get('/v1/webhooks', pushCall({
    operationId: 'listWebhooks', summary: 'List endpoints (no secrets)',
    responses: { 200: { description: 'The key\'s endpoints', schema: EndpointListSchema } },
    errors: [],
  }), async (request, reply) => {
    const key = await managementKey(deps, push.kv, request, reply);
    return { webhooks: (await push.endpoints.list(key.prefix)).map(endpointView) };
  });

  app.get('/v1/webhooks/:id', onEndpoint({
    operationId: 'getWebhook', summary: 'One endpoint',
    responses: { 200: { description: 'The endpoint (status enabled|disabled, disabled_reason gone|failing)', schema: EndpointSchema } },
  }), async (request: WithId, reply) => endpointView((await endpointOf(request, reply)).endpoint));

  app.delete('/v1/webhooks/:id', onEndpoint({
    operationId: 'deleteWebhook', summary: 'Delete an endpoint', responses: { 204: { description: 'Deleted' } },
  }), async (request: WithId, reply) => {
    const { key } = await endpointOf(request, reply);
    await push.endpoints.remove(key.prefix, request.params.id);
    return reply.code(204).send();
  });

  app.post('/v1/webhooks/:id/rotate-secret', onEndpoint({
    operationId: 'rotateWebhookSecret', summary: 'New secret; the old one keeps signing for 24 h',
    responses: { 200: { description: 'The new secret', schema: RotatedSecretSchema } },
  }), async (request: WithId, reply) => {
    const { key } = await endpointOf(request, reply);
    const secret = await push.endpoints.rotate(key.prefix, request.params.id, deps.clock());
    if (!secret) throw new ApiError('not_found', `No webhook endpoint ${request.params.id} for this key.`);
    return { id: request.params.id, secret, previous_secret_valid_until: new Date(deps.clock() + ROTATION_OVERLAP_MS).toISOString() };
  });

  app.post('/v1/webhooks/:id/enable', onEndpoint({
    operationId: 'enableWebhook', summary: 'Enable again; kept events (7 days) are sent in order',
    responses: { 200: { description: 'The endpoint', schema: EndpointSchema } },
  }), async (request: WithId, reply) => {
    const { key } = await endpointOf(request, reply);
    const endpoint = await push.dispatcher.enableEndpoint(key.prefix, request.params.id);
    if (!endpoint) throw new ApiError('not_found', `No webhook endpoint ${request.params.id} for this key.`);
    return endpointView(endpoint);
  });

  app.post('/v1/webhooks/:id/test', onEndpoint({
    operationId: 'testWebhook', summary: 'Send a webhook.test event',
    responses: { 202: { description: 'The event sent', schema: SentEventSchema } },
  }), async (request: WithId, reply) => {
    const { key } = await endpointOf(request, reply);
    const event = testEvent(key.prefix, key.mode, request.params.id, `evt_test_${randomBytes(12).toString('base64url')}`, deps.clock());
    await push.events.publish([event]);
    return reply.code(202).send({ event_id: event.id, type: event.type });
  });

  app.get('/v1/webhooks/:id/deliveries', onEndpoint({
    operationId: 'listWebhookDeliveries', summary: 'Latest delivery attempts', query: LimitQuerySchema,
    responses: { 200: { description: 'Latest attempts, newest first', schema: DeliveriesSchema } },
    errors: ['bad_request'],
  }), async (request: FastifyRequest<{ Params: { id: string }; Querystring: { limit?: string } }>, reply) => {
    const { key } = await endpointOf(request, reply);
    const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError('bad_request', '"limit" must be a whole number from 1 to 100.');
    return { deliveries: await push.dispatcher.attemptsOf(key.prefix, request.params.id, limit) };
  });

  app.post('/v1/webhooks/:id/deliveries/:eventId/resend', onEndpoint({
    operationId: 'resendWebhookEvent', summary: 'Send a kept event again (same webhook-id)',
    params: EndpointIdParams.extend({ eventId: z.string() }),
    responses: { 202: { description: 'The event sent again', schema: SentEventSchema } },
  }), async (request: FastifyRequest<{ Params: { id: string; eventId: string } }>, reply) => {
    const { key } = await endpointOf(request as WithId, reply);
    const event = await push.dispatcher.resend(key.prefix, request.params.id, request.params.eventId);
    if (!event) throw new ApiError('not_found', `Event ${request.params.eventId} is not kept any more (events are kept 8 days) or never existed.`);
    await push.events.publish([event]);
    return reply.code(202).send({ event_id: event.id, type: event.type });
  });

  methodNotAllowed(app, '/v1/webhooks', ['GET', 'POST']);
  methodNotAllowed(app, '/v1/webhooks/:id', ['GET', 'DELETE']);
  for (const action of ['rotate-secret', 'enable', 'test']) methodNotAllowed(app, `/v1/webhooks/:id/${action}`, ['POST']);
  methodNotAllowed(app, '/v1/webhooks/:id/deliveries', ['GET']);
  methodNotAllowed(app, '/v1/webhooks/:id/deliveries/:eventId/resend', ['POST']);
}
