/**
 * Customer notices (contracts.md "Customer notices", issue 43): the key's settings and its list of
 * notices (management calls), and what the providers and the customer reach without a key: Meta's
 * WhatsApp webhook (delivery statuses, a customer's STOP), the SMS gateway's inbound replies, and
 * the e-mail's unsubscribe link. None of these answers ever carries a phone or an address.
 */
import { timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  applyWhatsAppWebhook, isClock, isStop, NOTICE_KINDS, NOTICE_STATUSES, readUnsubscribeToken, signedByMeta, type NoticeSettings,
} from '../../../lib/buyer-notices/index.ts';
import type { Kv } from '../../../lib/kv/index.ts';
import { storedAwb } from '../../../lib/schemas/index.ts';
import { isLang, type Lang } from '../../../lib/tracking-page/types.ts';
import { managementKey } from '../auth/management-key.ts';
import type { ApiDeps } from '../context/deps.ts';
import { deferJsonErrors, readBody } from '../http/bodies.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { api, type RouteSpec } from '../openapi/spec.ts';
import { unsubscribeAsk, unsubscribeDone, unsubscribeInvalid } from '../pages/unsubscribe.ts';

type NoticeDeps = Pick<ApiDeps, 'access' | 'clock'> & { notices: NonNullable<ApiDeps['notices']> };

const Clock = z.string().refine(isClock, 'must be a time of day written HH:MM (IST), e.g. 21:00');
const SettingsSchema = z.object({
  events: z.array(z.enum(NOTICE_KINDS)).describe('The notices the key\'s customers get (default all)'),
  quiet_hours: z.object({ start: Clock, end: Clock }).nullable()
    .describe('IST; notices due inside wait for the end, out for delivery excepted (default 21:00–09:00); null: none'),
});
const SettingsInputSchema = SettingsSchema.partial();
const NoticeSchema = z.object({
  id: z.string(), carrier: z.string(), awb: z.string(), event: z.enum(NOTICE_KINDS),
  channel: z.enum(['whatsapp', 'sms', 'email']).nullable(), template: z.string().nullable(), language: z.string(),
  status: z.enum(NOTICE_STATUSES), detail: z.string().nullable().describe('Why it was not sent, or the last provider error\'s code'),
  at: z.string().describe('UTC ISO 8601: the latest change of its status'),
});
const NoticeListSchema = z.object({ notices: z.array(NoticeSchema), next_cursor: z.string().nullable() });
const ListQuerySchema = z.object({
  carrier: z.string().optional().describe('With awb: that shipment\'s notices only'),
  awb: z.string().optional(),
  cursor: z.string().optional().describe('next_cursor of the previous page'),
  limit: z.int().min(1).max(100).default(50).optional(),
});
const SETTINGS_EXAMPLE = { events: ['out_for_delivery', 'failed_attempt', 'delivered'], quiet_hours: { start: '21:00', end: '09:00' } };

const noticeCall = (spec: Omit<RouteSpec, 'caller' | 'limits' | 'tags'>) => api({ ...spec, caller: 'key', limits: 'burst', tags: ['Customer notices'] });

export function registerCustomerNoticeRoutes(app: FastifyInstance, deps: NoticeDeps, counters: Kv): void {
  const { notices } = deps;
  const store = notices.store;

  app.get('/v1/notices/settings', noticeCall({
    operationId: 'getNoticeSettings', summary: 'Which notices the key\'s customers get, and its quiet hours',
    responses: { 200: { description: 'The settings (defaults until set)', schema: SettingsSchema, example: SETTINGS_EXAMPLE } },
    errors: [],
  }), async (request, reply) => {
    const key = await managementKey(deps, counters, request, reply);
    return store.settings(key.prefix);
  });

  app.get('/v1/notices', noticeCall({
    operationId: 'listNotices', summary: 'The key\'s customer notices, newest first (never the contact)',
    description: 'Every notice made for a watch with a customer contact, with its channel, template, language and status. Kept a year.',
    query: ListQuerySchema,
    responses: { 200: { description: 'A page of notices', schema: NoticeListSchema } },
    errors: ['bad_request'],
  }), async (request: FastifyRequest<{ Querystring: Record<string, string | undefined> }>, reply) => {
    const key = await managementKey(deps, counters, request, reply);
    const q = request.query;
    const limit = q.limit === undefined ? 50 : Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError('bad_request', '"limit" must be a whole number from 1 to 100.');
    const cursor = q.cursor === undefined ? 0 : Number(q.cursor);
    if (!Number.isInteger(cursor) || cursor < 0) throw new ApiError('bad_request', '"cursor" must be the next_cursor of the previous page.');
    if ((q.carrier === undefined) !== (q.awb === undefined)) throw new ApiError('bad_request', 'Give "carrier" and "awb" together, or neither.');
    const page = await store.list(key.prefix, { carrier: q.carrier, awb: q.awb === undefined ? undefined : storedAwb(q.awb) }, cursor, limit);
    return { notices: page.items, next_cursor: page.next === null ? null : String(page.next) };
  });

  app.register(async (scope) => {
    deferJsonErrors(scope);
    scope.put('/v1/notices/settings', noticeCall({
      operationId: 'putNoticeSettings', summary: 'Choose which notices the key\'s customers get, and its quiet hours',
      description: 'A field left out stays as it was. `events` may be empty (no notices at all).',
      body: SettingsInputSchema, bodyExample: SETTINGS_EXAMPLE,
      responses: { 200: { description: 'The settings as stored', schema: SettingsSchema, example: SETTINGS_EXAMPLE } },
      errors: ['bad_request'],
    }), async (request, reply) => {
      const key = await managementKey(deps, counters, request, reply);
      const body = readBody(SettingsInputSchema, request.body, JSON.stringify(SETTINGS_EXAMPLE));
      if (body instanceof ApiError) throw body;
      const current = await store.settings(key.prefix);
      const next: NoticeSettings = {
        events: body.events ? NOTICE_KINDS.filter((k) => body.events!.includes(k)) : current.events,
        quiet_hours: body.quiet_hours === undefined ? current.quiet_hours : body.quiet_hours,
      };
      await store.setSettings(key.prefix, next);
      return next;
    });
  });

  // Meta's webhook: the handshake, then events signed over their raw bytes (a parser of this scope only).
  app.get('/notices/whatsapp/webhook', async (request: FastifyRequest<{ Querystring: Record<string, string | undefined> }>, reply) => {
    const q = request.query;
    if (q['hub.mode'] === 'subscribe' && notices.whatsappVerifyToken && q['hub.verify_token'] === notices.whatsappVerifyToken && q['hub.challenge']) {
      return reply.type('text/plain').send(q['hub.challenge']);
    }
    return reply.code(403).type('text/plain').send('Forbidden');
  });
  app.register(async (hook) => {
    hook.removeAllContentTypeParsers();
    hook.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    hook.post('/notices/whatsapp/webhook', async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (!signedByMeta(raw, request.headers['x-hub-signature-256'], notices.whatsappAppSecret)) {
        throw new ApiError('invalid_signature', 'Missing or wrong X-Hub-Signature-256: the body must be signed with the Meta app secret.');
      }
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new ApiError('bad_request', 'The webhook body is not JSON.');
      }
      await applyWhatsAppWebhook(json, notices.notices);
      return reply.code(200).send({ received: true });
    });
    methodNotAllowed(hook, '/notices/whatsapp/webhook', ['GET', 'POST']);
  });

  app.post('/notices/sms/inbound', async (request: FastifyRequest<{ Querystring: { token?: string } }>, reply) => {
    const token = request.query.token ?? '';
    const expected = notices.smsInboundToken;
    if (!expected || token.length !== expected.length || !timingSafeEqual(Buffer.from(token), Buffer.from(expected))) {
      throw new ApiError('unauthorized', 'The inbound URL\'s token is missing or wrong.');
    }
    const body = (request.body ?? {}) as { mobile?: unknown; number?: unknown; message?: unknown; text?: unknown };
    const from = String(body.mobile ?? body.number ?? '');
    const said = String(body.message ?? body.text ?? '');
    if (isStop(said)) await notices.notices.stopFromReply(from);
    return reply.code(200).send({ received: true });
  });
  methodNotAllowed(app, '/notices/sms/inbound', ['POST']);

  // The e-mail's unsubscribe link: GET asks, POST (the button, or the mailbox's one-click) stops.
  app.register(async (scope) => {
    await scope.register(formbody);
    const langOf = (request: FastifyRequest): Lang => {
      const q = (request.query as { lang?: string }).lang;
      return q && isLang(q) ? q : 'en';
    };
    const page = (reply: FastifyReply, status: number, html: string) =>
      reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').header('X-Robots-Tag', 'noindex').send(html);
    scope.get('/notices/unsubscribe/:token', async (request: FastifyRequest<{ Params: { token: string } }>, reply) => {
      const lang = langOf(request);
      if (!readUnsubscribeToken(notices.unsubscribeSecret, request.params.token)) return page(reply, 404, unsubscribeInvalid(lang));
      return page(reply, 200, unsubscribeAsk(lang, `${request.params.token}?lang=${lang}`));
    });
    scope.post('/notices/unsubscribe/:token', async (request: FastifyRequest<{ Params: { token: string } }>, reply) => {
      const lang = langOf(request);
      const named = readUnsubscribeToken(notices.unsubscribeSecret, request.params.token);
      if (!named) return page(reply, 404, unsubscribeInvalid(lang));
      await store.stopDigest(named.prefix, named.digest);
      // RFC 8058: no redirect; the answer itself says it is done.
      return page(reply, 200, unsubscribeDone(lang));
    });
    methodNotAllowed(scope, '/notices/unsubscribe/:token', ['GET', 'POST']);
  });

  methodNotAllowed(app, '/v1/notices/settings', ['GET', 'PUT']);
  methodNotAllowed(app, '/v1/notices', ['GET']);
}
