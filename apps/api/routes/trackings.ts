import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyMode } from '../../../lib/access/index.ts';
import type { Push } from '../../../lib/webhooks/index.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';
import { WatchBodySchema, readBody } from '../bodies.ts';
import { checkShipmentInput, meteredLookup } from '../metered-lookup.ts';
import { managementKey } from '../push-auth.ts';

const MAX_PAGE = 100;
const TERMINAL_STAGES: ReadonlySet<string> = new Set(['delivered', 'rto_delivered', 'cancelled']);

const WATCH_EXAMPLE = '{"carrier": "delhivery", "awb": "1234567890102"}';

/**
 * Watches (contracts.md "Push"): `POST /v1/trackings` consumes one lookup exactly as a track call
 * answered 200 or 404 would, and only when it starts a watch; watching again is free.
 */
export function registerTrackingRoutes(app: FastifyInstance, deps: ApiDeps, push: Push): void {
  app.post('/v1/trackings', async (request: FastifyRequest, reply: FastifyReply) => {
    // A malformed body is reported after the key checks (meteredLookup), as a lookup's bad input is.
    const body = readBody(WatchBodySchema, request.body, WATCH_EXAMPLE);
    const presented = request.headers['x-api-key'];
    const input = body instanceof ApiError ? body : checkShipmentInput(deps, body.carrier, body.awb);
    // Already watching: answered without counting a lookup (nor polling a carrier).
    if (typeof presented === 'string' && keyMode(presented) && !(input instanceof ApiError)) {
      const key = await managementKey(deps, push.kv, request, reply);
      const existing = await push.watches.get(key.prefix, input.carrier, input.awb, deps.clock());
      if (existing?.status === 'active') {
        return reply.code(200).send({ watch: existing, tracking: await deps.tracking.peek(input.carrier, input.awb, key.mode) });
      }
    }
    const looked = await meteredLookup(deps, request, reply, input);
    const record = looked.result.kind === 'found' ? looked.result.record : null;
    const { created, watch } = await push.watches.create({
      keyPrefix: looked.key.prefix, mode: looked.key.mode, carrier: looked.carrier, awb: looked.awb, record,
      polledMs: record ? Date.parse(record.last_polled_at) : deps.clock(),
      terminal: record !== null && TERMINAL_STAGES.has(record.insights.current_stage),
      nowMs: deps.clock(),
    });
    if (!created) {
      // Another call of this key started the same watch a moment ago: this one consumes nothing.
      await deps.access.refund(looked.ticket);
      reply.header('X-Lookups-Remaining', looked.remaining + 1);
    }
    return reply.code(created ? 201 : 200).send({ watch, tracking: record });
  });

  app.get('/v1/trackings', async (request: FastifyRequest<{ Querystring: { cursor?: string; limit?: string } }>, reply) => {
    const key = await managementKey(deps, push.kv, request, reply);
    const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new ApiError('bad_request', `"limit" must be a whole number from 1 to ${MAX_PAGE}.`);
    const page = await push.watches.list(key.prefix, deps.clock(), { cursor: request.query.cursor ?? null, limit });
    return { watches: page.items, next_cursor: page.next_cursor };
  });

  const one = async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply: FastifyReply) => {
    const key = await managementKey(deps, push.kv, request, reply);
    const input = checkShipmentInput(deps, request.params.carrier, request.params.awb);
    if (input instanceof ApiError) throw input;
    return { key, ...input };
  };
  app.get('/v1/trackings/:carrier/:awb', async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply) => {
    const { key, carrier, awb } = await one(request, reply);
    const watch = await push.watches.get(key.prefix, carrier, awb, deps.clock());
    if (!watch) throw new ApiError('not_found', `This key does not watch ${carrier} consignment ${awb.toUpperCase()}.`);
    return { watch };
  });
  app.delete('/v1/trackings/:carrier/:awb', async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply) => {
    const { key, carrier, awb } = await one(request, reply);
    if (!(await push.watches.remove(key.prefix, key.mode, carrier, awb))) throw new ApiError('not_found', `This key does not watch ${carrier} consignment ${awb.toUpperCase()}.`);
    return reply.code(204).send();
  });
  methodNotAllowed(app, '/v1/trackings', ['GET', 'POST']);
  methodNotAllowed(app, '/v1/trackings/:carrier/:awb', ['GET', 'DELETE']);
}
