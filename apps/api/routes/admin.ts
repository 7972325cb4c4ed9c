import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AccessError, isKeyPrefix, toUsageRecord, type AccessStore, type KeyRecord } from '../../../lib/access/index.ts';
import { PLAN_NAMES } from '../../../lib/config/index.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';

const RenewBodySchema = z.object({ plan: z.enum(PLAN_NAMES).optional() }).strict();

/** Compares digests so neither the token's length nor its content leaks through timing. */
function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function requireAdmin(request: FastifyRequest, token: string): void {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match || !sameToken(match[1]!.trim(), token)) {
    throw new ApiError('unauthorized', 'Admin calls need Authorization: Bearer <ADMIN_TOKEN>.');
  }
}

function toApiError(err: unknown): unknown {
  return err instanceof AccessError ? new ApiError(err.code, err.message) : err;
}

async function keyView(access: AccessStore, record: KeyRecord, now: Date) {
  return { ...toUsageRecord(record, await access.usage(record.prefix, now), now), email: record.email, mode: record.mode };
}

function prefixParam(request: FastifyRequest<{ Params: { prefix: string } }>): string {
  const { prefix } = request.params;
  if (!isKeyPrefix(prefix)) throw new ApiError('bad_request', 'A key prefix is trk_live_ or trk_test_ followed by 7 letters or digits.');
  return prefix;
}

/** The operators' API (contracts.md "Admin API"); the CLI calls the same routes. */
export function registerAdminRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { access } = deps;
  const now = () => new Date(deps.clock());

  app.register(async (admin) => {
    admin.addHook('onRequest', async (request) => requireAdmin(request, deps.adminToken));

    admin.post('/admin/keys', async (request, reply) => {
      try {
        const created = await access.createKey((request.body ?? {}) as never, now());
        const view = await keyView(access, created.record, now());
        return reply.code(201).send({
          key: created.key, key_prefix: view.key_prefix, plan: view.plan, status: view.status,
          email: view.email, mode: view.mode, period: view.period, rate_limits: view.rate_limits,
        });
      } catch (err) {
        throw toApiError(err);
      }
    });

    admin.get<{ Params: { prefix: string } }>('/admin/keys/:prefix', async (request) => {
      const record = await access.getByPrefix(prefixParam(request));
      if (!record) throw new ApiError('not_found', `No key with prefix ${request.params.prefix}.`);
      return keyView(access, record, now());
    });

    for (const [action, status] of [['suspend', 'suspended'], ['resume', 'active'], ['revoke', 'revoked']] as const) {
      admin.post<{ Params: { prefix: string } }>(`/admin/keys/:prefix/${action}`, async (request) => {
        try {
          const record = await access.setStatus(prefixParam(request), status);
          return keyView(access, record, now());
        } catch (err) {
          throw toApiError(err);
        }
      });
    }

    admin.post<{ Params: { prefix: string } }>('/admin/keys/:prefix/renew', async (request) => {
      const body = RenewBodySchema.safeParse(request.body ?? {});
      if (!body.success) throw new ApiError('bad_request', `Invalid renew body: ${body.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`);
      try {
        const record = await access.renew(prefixParam(request), body.data.plan, now());
        return keyView(access, record, now());
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
