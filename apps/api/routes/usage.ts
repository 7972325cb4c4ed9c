import type { FastifyInstance } from 'fastify';
import { toUsageRecord } from '../../../lib/access/index.ts';
import { authenticate } from '../auth/api-key.ts';
import type { ApiDeps } from '../context/deps.ts';
import { methodNotAllowed } from '../http/errors.ts';
import { api } from '../openapi/spec.ts';
import { UsageRecordSchema } from '../../../lib/schemas/index.ts';

/** What these routes use of the API's dependencies. */
type UsageDeps = Pick<ApiDeps, 'access' | 'analyzer' | 'clock' | 'notices' | 'product'>;

/** GET /v1/usage: the caller's plan, period and remaining lookups. Consumes nothing; answers after expiry too. */
export function registerUsageRoutes(app: FastifyInstance, deps: UsageDeps): void {
  app.get('/v1/usage', api({
    operationId: 'usage', summary: "The caller's plan, period and remaining lookups", caller: 'key', pastPeriodAllowed: true,
    description: 'Consumes nothing; answers after the period has ended too.',
    responses: { 200: { description: 'Usage record', schema: UsageRecordSchema } },
    errors: [],
  }), async (request) => {
    const now = new Date(deps.clock());
    const record = await authenticate(request, deps.access, now, { pastPeriodAllowed: true });
    const usage = toUsageRecord(record, await deps.access.usage(record.prefix, now), now);
    // Growth and business keys: the shipment analyzer's own allowance (contracts.md).
    const analyzer = await deps.analyzer?.usage(record);
    // Plans with customer notices: the period's count and allowance (contracts.md "Customer notices").
    const limit = deps.product.config.plans[record.plan].notices;
    const notices = deps.notices && limit > 0 ? { used: Math.min(await deps.notices.store.used(record.prefix, record.period_start), limit), limit } : null;
    return { ...usage, ...(analyzer ? { analyzer } : {}), ...(notices ? { notices } : {}) };
  });
  methodNotAllowed(app, '/v1/usage', ['GET']);
}
