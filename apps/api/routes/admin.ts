import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Analyzer } from '../../../lib/analyzer/index.ts';
import { AccessError, isKeyPrefix, standingOf, toUsageRecord, type AccessStore, type KeyRecord } from '../../../lib/access/index.ts';
import { PLAN_NAMES } from '../../../lib/config/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { adminCall } from '../openapi/spec.ts';
import { requireAdmin } from '../auth/admin-token.ts';
import { CreatedKeySchema, KeyPrefixParams, KeyViewSchema } from '../openapi/schemas.ts';
import { CreateKeyInputSchema } from '../../../lib/access/record.ts';

/** What these routes use of the API's dependencies. */
type AdminDeps = Pick<ApiDeps, 'access' | 'adminToken' | 'analyzer' | 'clock' | 'push' | 'throttle'>;

const RenewBodySchema = z.object({ plan: z.enum(PLAN_NAMES).optional() }).strict();

/** contracts.md: JSON in. A body of any other type (a form, text) is refused before it is parsed. */
function requireJsonBody(request: FastifyRequest): void {
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody) return;
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ApiError('unsupported_media_type', `The admin API takes JSON bodies: send Content-Type: application/json${type ? `, not ${type}` : ''}.`);
  }
}

function toApiError(err: unknown): unknown {
  return err instanceof AccessError ? new ApiError(err.code, err.message) : err;
}

async function keyView(access: AccessStore, record: KeyRecord, now: Date, analyzer?: Analyzer) {
  const usage = toUsageRecord(record, await access.usage(record.prefix, now), now);
  const analyzerUsage = await analyzer?.usage(record);
  return { ...usage, ...(analyzerUsage ? { analyzer: analyzerUsage } : {}), email: record.email, mode: record.mode };
}

/** `analyzer_shipments_limit` of POST /admin/keys: the analyzer's allowance per period for this key. */
function analyzerLimitOf(body: unknown): { rest: unknown; limit: number | null } {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('analyzer_shipments_limit' in body)) return { rest: body, limit: null };
  const { analyzer_shipments_limit: limit, ...rest } = body as Record<string, unknown>;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit <= 0) {
    throw new ApiError('bad_request', 'Invalid key request: analyzer_shipments_limit must be a positive integer.');
  }
  return { rest, limit };
}

function prefixParam(request: FastifyRequest<{ Params: { prefix: string } }>): string {
  const { prefix } = request.params;
  if (!isKeyPrefix(prefix)) throw new ApiError('bad_request', 'A key prefix is trk_live_ or trk_test_ followed by 7 letters or digits.');
  return prefix;
}

/** The operators' API (contracts.md "Admin API"); the CLI calls the same routes. */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { access } = deps;
  const now = () => new Date(deps.clock());
  // Push follows the key's standing before the answer: held events go out on resume or renewal;
  // a revoke drops watches, endpoints and queued events (workers also ask at every step).
  // Held analyses go on at once when the key is active again (the analyzer's runner stops a revoked
  // key's and holds a suspended key's by itself, asking at every chunk).
  const keyChanged = async (record: KeyRecord) => {
    const standing = standingOf(record, now());
    await deps.push?.keyChanged(record.prefix, record.mode, standing);
    await deps.analyzer?.keyChanged(record.prefix, standing);
  };

  app.register(async (admin) => {
    admin.addHook('onRequest', async (request, reply) => {
      await requireAdmin(request, deps.adminToken, deps.throttle, deps.clock());
      requireJsonBody(request);
      // Answers name keys (the full key once, at creation) and e-mail addresses.
      reply.header('Cache-Control', 'no-store');
    });

    admin.post('/admin/keys', adminCall({
      operationId: 'createKey', summary: 'Create an API key (the full key is shown only here)',
      body: CreateKeyInputSchema.extend({
        analyzer_shipments_limit: z.int().positive().optional().describe('The analyzer\'s allowance per period for this key (growth and business)'),
      }),
      bodyExample: { plan: 'starter', mode: 'live', email: 'ops@example.com' },
      responses: { 201: { description: 'The key, shown once', schema: CreatedKeySchema } },
      errors: ['conflict'],
    }), async (request, reply) => {
      try {
        const { rest, limit } = analyzerLimitOf(request.body ?? {});
        const created = await access.createKey(rest as never, now());
        if (limit !== null) await deps.analyzer?.store.setLimitOverride(created.record.prefix, limit);
        const view = await keyView(access, created.record, now(), deps.analyzer);
        return reply.code(201).send({
          key: created.key, key_prefix: view.key_prefix, plan: view.plan, status: view.status,
          email: view.email, mode: view.mode, period: view.period, rate_limits: view.rate_limits,
        });
      } catch (err) {
        throw toApiError(err);
      }
    });

    admin.get<{ Params: { prefix: string } }>('/admin/keys/:prefix', adminCall({
      operationId: 'getKey', summary: 'A key\'s record and usage', params: KeyPrefixParams,
      responses: { 200: { description: 'The key', schema: KeyViewSchema } },
      errors: ['bad_request', 'not_found'],
    }), async (request) => {
      const record = await access.getByPrefix(prefixParam(request));
      if (!record) throw new ApiError('not_found', `No key with prefix ${request.params.prefix}.`);
      return keyView(access, record, now(), deps.analyzer);
    });

    for (const [action, status] of [['suspend', 'suspended'], ['resume', 'active'], ['revoke', 'revoked']] as const) {
      admin.post<{ Params: { prefix: string } }>(`/admin/keys/:prefix/${action}`, adminCall({
        operationId: `${action}Key`, summary: `${action[0]!.toUpperCase()}${action.slice(1)} a key`, params: KeyPrefixParams,
        responses: { 200: { description: 'The key after the change', schema: KeyViewSchema } },
        errors: ['bad_request', 'not_found', 'conflict'],
      }), async (request) => {
        try {
          const record = await access.setStatus(prefixParam(request), status);
          await keyChanged(record);
          return keyView(access, record, now(), deps.analyzer);
        } catch (err) {
          throw toApiError(err);
        }
      });
    }

    admin.post<{ Params: { prefix: string } }>('/admin/keys/:prefix/renew', adminCall({
      operationId: 'renewKey', summary: 'Start a new plan period now (optionally on another plan)', params: KeyPrefixParams,
      body: RenewBodySchema, bodyExample: { plan: 'growth' },
      responses: { 200: { description: 'The key after the renewal', schema: KeyViewSchema } },
      errors: ['not_found', 'conflict'],
    }), async (request) => {
      const body = RenewBodySchema.safeParse(request.body ?? {});
      if (!body.success) {
        const issues = body.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
        throw new ApiError('bad_request', `Invalid renew body: ${issues}`);
      }
      try {
        const record = await access.renew(prefixParam(request), body.data.plan, now());
        // A plan given switches to that plan's numbers: the analyzer's too (as for lookups_limit).
        if (body.data.plan) await deps.analyzer?.store.setLimitOverride(record.prefix, null);
        await keyChanged(record);
        return keyView(access, record, now(), deps.analyzer);
      } catch (err) {
        throw toApiError(err);
      }
    });

    // decisions.md: a wrong method is 405, not 404 (after the token check, like every admin call).
    methodNotAllowed(admin, '/admin/keys', ['POST']);
    methodNotAllowed(admin, '/admin/keys/:prefix', ['GET']);
    for (const action of ['suspend', 'resume', 'revoke', 'renew']) methodNotAllowed(admin, `/admin/keys/:prefix/${action}`, ['POST']);
  });
}
