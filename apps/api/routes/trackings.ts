import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyMode } from '../../../lib/access/index.ts';
import { DEFAULT_RUNNING_LATE_BELOW, type Push, type WatchPromise, type WatchView } from '../../../lib/push/index.ts';
import { withPromise } from '../../../lib/prediction/index.ts';
import type { KeyMode, TrackingRecord } from '../../../lib/schemas/index.ts';
import type { FoundRecord, TrackingService } from '../../../lib/tracking/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { WatchBodySchema, readBody } from '../http/bodies.ts';
import { checkShipmentInput, meteredLookup } from '../lookup/metered.ts';
import { managementKey } from '../auth/management-key.ts';
import { api } from '../openapi/spec.ts';
import { publicBaseOf } from '../context/public-base.ts';
import { AwbParam, OneWatchSchema, PageQuerySchema, WatchAnswerSchema, WatchListSchema, carrierParam } from '../openapi/schemas.ts';
import { z } from 'zod';
import { isTerminalStage } from '../../../lib/cache/index.ts';
import {
  contactProblem, NOTICE_CHANNELS, normalizeEmail, normalizePhone, usableChannels, type Contact, type CustomerView, type NoticeChannel,
} from '../../../lib/buyer-notices/index.ts';

/** What these routes use of the API's dependencies. */
type TrackingDeps = Pick<ApiDeps, 'access' | 'clock' | 'metrics' | 'product' | 'tracking' | 'publicBaseUrl' | 'notices'>;

type WatchBody = z.output<typeof WatchBodySchema>;
/** A watch call's customer contact: absent (unchanged), null (erase it), or one to store. */
type CustomerChange = undefined | null | { channels: NoticeChannel[]; language: string; contact: Contact };

/** The customer contact a watch call gives, checked (contracts.md "Customer notices"), or the 400 it deserves. */
function customerChangeOf(body: WatchBody): CustomerChange | ApiError {
  const c = body.customer;
  if (c === undefined || c === null) return c;
  if (c.consent !== true) {
    return new ApiError('consent_required', '"customer.consent" must be true: the shop confirms its customer agreed to get notices about this shipment.');
  }
  const phone = c.phone ? normalizePhone(c.phone) : null;
  if (c.phone && !phone) return new ApiError('invalid_customer', '"customer.phone" must be an Indian mobile number, e.g. +919876543210.');
  const email = c.email ? normalizeEmail(c.email) : null;
  if (c.email && !email) return new ApiError('invalid_customer', '"customer.email" must be an e-mail address, e.g. ravi@example.com.');
  const contact = { phone, email };
  // Channels not named: every one the contact can serve, WhatsApp first.
  const channels = c.channels ?? usableChannels(NOTICE_CHANNELS, contact);
  const problem = contactProblem(channels, contact);
  if (problem) return new ApiError('invalid_customer', `${problem}.`);
  return { channels, language: c.language ?? body.language ?? 'en', contact };
}

/** Stores or erases the watch's contact as the call asks, and answers what the watch shows of it. */
async function applyCustomer(deps: TrackingDeps, prefix: string, carrier: string, awb: string, change: CustomerChange): Promise<CustomerView | null> {
  const vault = deps.notices?.vault;
  if (!vault) return null;
  if (change === null) await vault.erase(prefix, carrier, awb);
  else if (change !== undefined) return vault.put(prefix, carrier, awb, change, deps.clock());
  return vault.view(prefix, carrier, awb);
}

const MAX_PAGE = 100;

const WATCH_EXAMPLE = '{"carrier": "delhivery", "awb": "1234567890102", "promised_by": "2026-11-28"}';

/** The promise settings a watch call names (absent fields: unchanged on an existing watch, defaults on a new one). */
function promiseChangeOf(body: { promised_by?: string | null; running_late_below?: number | null }): Partial<WatchPromise> {
  const change: Partial<WatchPromise> = {};
  if (body.promised_by !== undefined) change.promised_by = body.promised_by;
  if (body.running_late_below !== undefined) change.running_late_below = body.running_late_below ?? DEFAULT_RUNNING_LATE_BELOW;
  return change;
}

/** A watch as answered: its view, the tracking page's links (contracts.md "Tracking page") and its customer, masked. */
type WatchAnswer = WatchView & { page_url: string; order_page_url: string | null; customer: CustomerView | null };

/**
 * The page links of a watch. `register`: made to open now (a new watch, one read by itself);
 * a list only computes them (links of watches made before pages existed open once read alone).
 */
async function withPages(
  push: Push, base: string, key: { prefix: string; mode: KeyMode }, watch: WatchView, register: boolean, customer: CustomerView | null,
): Promise<WatchAnswer> {
  const link = register ? push.pages.register.bind(push.pages) : push.pages.tokenOf.bind(push.pages);
  const shipment = await link({
    kind: 'shipment', prefix: key.prefix, mode: key.mode, carrier: watch.carrier, awb: watch.awb, watched_since_ms: Date.parse(watch.watched_since),
  });
  const order = watch.order_id ? await link({ kind: 'order', prefix: key.prefix, mode: key.mode, order_id: watch.order_id }) : null;
  return { ...watch, page_url: `${base}/t/${shipment}`, order_page_url: order ? `${base}/o/${order}` : null, customer };
}

/** A watch's record: the answered one, with `insights.prediction.promise` when the watch has a promise. */
export function watchRecord(tracking: TrackingService, found: FoundRecord | null, watch: Pick<WatchView, 'promised_by'>, mode: KeyMode): TrackingRecord | null {
  if (found === null) return null;
  if (watch.promised_by === null) return found.record;
  const probability = tracking.promiseProbability(found, mode, watch.promised_by);
  return withPromise(found.record, probability === null ? null : { promised_by: watch.promised_by, on_time_probability: probability });
}

/**
 * Watches (contracts.md "Push"): `POST /v1/trackings` consumes one lookup exactly as a track call
 * answered 200 or 404 would, and only when it starts a watch; watching again is free.
 */
export function registerTrackingRoutes(app: FastifyInstance, deps: TrackingDeps, push: Push): void {
  const tags = ['Push'];
  const shipmentParams = z.object({ carrier: carrierParam(deps.product), awb: AwbParam });
  app.post('/v1/trackings', api({
    tags, operationId: 'watch', summary: 'Watch a shipment (consumes one lookup; watching again is free)', caller: 'key', limits: 'metered',
    description: 'Starts pushing every change of the shipment to the key\'s webhook endpoints. '
      + 'Consumes one lookup exactly as a track call answered 200 or 404 would. A watch ends 3 days after a terminal state or 60 days after it began. '
      + 'promised_by (YYYY-MM-DD, the day the shop promised its customer, IST) makes the watch\'s records carry insights.prediction.promise '
      + '(P(delivered by the end of that day)); tracking.running_late is sent once when that probability (without promised_by: the carrier '
      + 'EDD\'s on_time_probability) falls below running_late_below (0 to 1, default 0.5) while the shipment moves, again only after it recovered. '
      + 'Watching again with either field changes it (a bad one is 400: invalid_date, bad_request). '
      + 'customer (phone, email, language, channels, consent: true) lets us send the shop\'s customer WhatsApp, SMS or e-mail notices about this '
      + 'shipment (docs/integrators/customer-notices.md): without consent 400 consent_required, an unusable contact 400 invalid_customer, a '
      + 'plan without notices 403 plan_feature_unavailable; it is '
      + 'kept encrypted, shown only masked, erased 7 days after the shipment ends, with the watch, or by DELETE …/customer; null erases it.',
    body: WatchBodySchema, bodyExample: { carrier: 'delhivery', awb: '1234567890102', promised_by: '2026-11-28', running_late_below: 0.5 },
    responses: {
      201: { description: 'Watch started (tracking null while the carrier has no scans)', schema: WatchAnswerSchema },
      // Answered as a management call (auth/management-key.ts): the burst limit's headers, nothing metered.
      200: {
        description: 'Already watched by this key: nothing consumed', schema: WatchAnswerSchema, limits: 'burst', optionalHeaders: ['X-Lookups-Remaining'],
      },
    },
    errors: [
      'invalid_awb', 'unsupported_carrier', 'invalid_date', 'bad_request', 'consent_required', 'invalid_customer', 'plan_feature_unavailable',
      'daily_quota_exceeded', 'plan_quota_exceeded', 'upstream_error',
    ],
  }), async (request: FastifyRequest, reply: FastifyReply) => {
    // A malformed body is reported after the key checks (meteredLookup), as a lookup's bad input is.
    const body = readBody(WatchBodySchema, request.body, WATCH_EXAMPLE);
    const presented = request.headers['x-api-key'];
    const customer = body instanceof ApiError ? undefined : customerChangeOf(body);
    // A bad contact is refused like any bad input: after the key checks, nothing consumed.
    const input = body instanceof ApiError ? body : customer instanceof ApiError ? customer : checkShipmentInput(deps, body.carrier, body.awb);
    const contact = customer instanceof ApiError ? undefined : customer;
    const promise = body instanceof ApiError ? {} : promiseChangeOf(body);
    const page = body instanceof ApiError ? {} : { order_id: body.order_id ?? null, language: body.language ?? null };
    const changesPromise = Object.keys(promise).length > 0;
    // Already watching: answered without counting a lookup (nor polling a carrier); promise fields given change it.
    if (typeof presented === 'string' && keyMode(presented) && !(input instanceof ApiError)) {
      const key = await managementKey(deps, push.kv, request, reply);
      // A contact is kept only for notices: a plan without them keeps none (refused before anything is consumed).
      if (contact && deps.product.config.plans[key.plan].notices === 0) {
        throw new ApiError('plan_feature_unavailable', `Customer notices are not part of the ${key.plan} plan (they are in trial, on the sandbox `
          + 'providers, growth and business): watch without "customer", or upgrade the plan.');
      }
      const existing = await push.watches.get(key.prefix, input.carrier, input.awb, deps.clock());
      if (existing?.status === 'active') {
        const watch = (changesPromise ? await push.watches.setPromise(key.prefix, input.carrier, input.awb, promise, deps.clock()) : null) ?? existing;
        const found = await deps.tracking.peekFound(input.carrier, input.awb, key.mode);
        const shown = await applyCustomer(deps, key.prefix, input.carrier, input.awb, contact);
        const answer = await withPages(push, publicBaseOf(deps, app), key, watch, true, shown);
        return reply.code(200).send({ watch: answer, tracking: watchRecord(deps.tracking, found, watch, key.mode) });
      }
    }
    const looked = await meteredLookup(deps, request, reply, input);
    const found = looked.result.kind === 'found' ? looked.result : null;
    const record = found?.record ?? null;
    const made = await push.watches.create({
      keyPrefix: looked.key.prefix, mode: looked.key.mode, carrier: looked.carrier, awb: looked.awb, record,
      polledMs: record ? Date.parse(record.last_polled_at) : deps.clock(),
      terminal: record !== null && isTerminalStage(record.insights.current_stage),
      nowMs: deps.clock(),
      promise,
      page,
    });
    if (made.created && made.watch.order_id) await push.pages.addToOrder(looked.key.prefix, made.watch.order_id, looked.carrier, looked.awb);
    let watch = made.watch;
    if (!made.created) {
      // Another call of this key started the same watch a moment ago: this one consumes nothing.
      await deps.access.refund(looked.ticket);
      reply.header('X-Lookups-Remaining', looked.remaining + 1);
      if (changesPromise) watch = (await push.watches.setPromise(looked.key.prefix, looked.carrier, looked.awb, promise, deps.clock())) ?? watch;
    }
    // A new watch starts without the contact of an earlier one of the same shipment.
    const shown = await applyCustomer(deps, looked.key.prefix, looked.carrier, looked.awb, made.created && contact === undefined ? null : contact);
    const answer = await withPages(push, publicBaseOf(deps, app), looked.key, watch, true, shown);
    return reply.code(made.created ? 201 : 200).send({ watch: answer, tracking: watchRecord(deps.tracking, found, watch, looked.key.mode) });
  });

  app.get('/v1/trackings', api({
    tags, operationId: 'listWatches', summary: 'List the key\'s watches (cursor-paged)', caller: 'key', limits: 'burst',
    query: PageQuerySchema,
    responses: { 200: { description: 'A page of watches', schema: WatchListSchema } },
    errors: ['bad_request'],
  }), async (request: FastifyRequest<{ Querystring: { cursor?: string; limit?: string } }>, reply) => {
    const key = await managementKey(deps, push.kv, request, reply);
    const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new ApiError('bad_request', `"limit" must be a whole number from 1 to ${MAX_PAGE}.`);
    const page = await push.watches.list(key.prefix, deps.clock(), { cursor: request.query.cursor ?? null, limit });
    const base = publicBaseOf(deps, app);
    const watches = await Promise.all(page.items.map(async (watch) => withPages(
      push, base, key, watch, false, (await deps.notices?.vault.view(key.prefix, watch.carrier, watch.awb)) ?? null)));
    return { watches, next_cursor: page.next_cursor };
  });

  const one = async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply: FastifyReply) => {
    const key = await managementKey(deps, push.kv, request, reply);
    const input = checkShipmentInput(deps, request.params.carrier, request.params.awb);
    if (input instanceof ApiError) throw input;
    return { key, ...input };
  };
  app.get('/v1/trackings/:carrier/:awb', api({
    tags, operationId: 'getWatch', summary: 'One watch', caller: 'key', limits: 'burst', params: shipmentParams,
    responses: { 200: { description: 'The watch', schema: OneWatchSchema } },
    errors: ['invalid_awb', 'unsupported_carrier', 'not_found'],
  }), async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply) => {
    const { key, carrier, awb } = await one(request, reply);
    const watch = await push.watches.get(key.prefix, carrier, awb, deps.clock());
    if (!watch) throw new ApiError('not_found', `This key does not watch ${carrier} consignment ${awb}.`);
    const customer = (await deps.notices?.vault.view(key.prefix, carrier, awb)) ?? null;
    return { watch: await withPages(push, publicBaseOf(deps, app), key, watch, true, customer) };
  });
  app.delete('/v1/trackings/:carrier/:awb', api({
    tags, operationId: 'deleteWatch', summary: 'End a watch', caller: 'key', limits: 'burst', params: shipmentParams,
    responses: { 204: { description: 'Ended' } },
    errors: ['invalid_awb', 'unsupported_carrier', 'not_found'],
  }), async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply) => {
    const { key, carrier, awb } = await one(request, reply);
    if (!(await push.watches.remove(key.prefix, key.mode, carrier, awb))) {
      throw new ApiError('not_found', `This key does not watch ${carrier} consignment ${awb}.`);
    }
    return reply.code(204).send();
  });
  app.delete('/v1/trackings/:carrier/:awb/customer', api({
    tags, operationId: 'deleteWatchCustomer', summary: 'Erase the customer contact of a watch now', caller: 'key', limits: 'burst', params: shipmentParams,
    description: 'Erases the phone and e-mail given with the watch (they are also erased 7 days after the shipment ends and when the watch is deleted). '
      + 'No notice goes to that customer after it; the watch and its tracking page go on.',
    responses: { 204: { description: 'Erased (or there was none)' } },
    errors: ['invalid_awb', 'unsupported_carrier', 'not_found'],
  }), async (request: FastifyRequest<{ Params: { carrier: string; awb: string } }>, reply) => {
    const { key, carrier, awb } = await one(request, reply);
    if (!(await push.watches.get(key.prefix, carrier, awb, deps.clock()))) {
      throw new ApiError('not_found', `This key does not watch ${carrier} consignment ${awb}.`);
    }
    await deps.notices?.vault.erase(key.prefix, carrier, awb);
    return reply.code(204).send();
  });
  methodNotAllowed(app, '/v1/trackings', ['GET', 'POST']);
  methodNotAllowed(app, '/v1/trackings/:carrier/:awb', ['GET', 'DELETE']);
  methodNotAllowed(app, '/v1/trackings/:carrier/:awb/customer', ['DELETE']);
}
