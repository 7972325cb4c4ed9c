import { randomBytes } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { countProbe, isProbe, type ProbeCounter } from '../../lib/metrics/index.ts';
import type { ApiDeps } from './context/deps.ts';
import { registerErrorHandling } from './http/errors.ts';
import { registerDrain } from './http/drain.ts';
import { registerLinger } from './http/linger.ts';
import { SERVER_LIMITS, registerHardening, serverOptions } from './http/hardening.ts';
import { requestSerializer } from './http/log-redaction.ts';
import { stdoutLogStream } from '../../lib/logging/log-stream.ts';
import { deferJsonErrors } from './http/bodies.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { requireAdmin } from './auth/admin-token.ts';
import { collectDescribedRoutes } from './openapi/spec.ts';
import { ADMIN_INFO, PUBLIC_INFO, buildDocument } from './openapi/document.ts';
import { registerAnalysisRoutes } from './routes/analyses.ts';
import { registerBatchRoute } from './routes/batch.ts';
import { registerBillingRoutes } from './routes/billing.ts';
import { registerBrandingRoutes } from './routes/branding.ts';
import { registerCarrierRoutes } from './routes/carriers.ts';
import { registerCustomerNoticeRoutes } from './routes/customer-notices.ts';
import { publicBaseOf } from './context/public-base.ts';
import { registerLaneRoutes } from './routes/lanes.ts';
import { registerEstimateRoutes } from './routes/estimate.ts';
import { registerOpsRoutes } from './routes/ops.ts';
import { registerDetectedTrackRoute } from './routes/track-detect.ts';
import { registerTrackRoutes } from './routes/track.ts';
import { registerTrackingRoutes } from './routes/trackings.ts';
import { registerTrackingPages } from './routes/tracking-pages.ts';
import { registerTrialRoutes } from './routes/trial.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { registerUsageRoutes } from './routes/usage.ts';

/**
 * Request ids: unique across processes (a random per-process part) and cheap (a counter), where a
 * UUID per request cost as much as routing it.
 */
const REQUEST_ID_PREFIX = `req_${randomBytes(6).toString('hex')}`;
let requestCount = 0;
const nextRequestId = () => `${REQUEST_ID_PREFIX}${(++requestCount).toString(16).padStart(20, '0')}`;

/**
 * One log line per request, when it completes, naming the request too, instead of Fastify's two
 * (incoming + completed): at thousands of lookups a second logging was the largest cost after the
 * socket writes (`npm run bench -- api --profile`).
 */
class OneLinePerRequest extends LogController {
  /** Health, readiness and metrics probes are counted, not logged (an error still is). */
  private readonly probes: ProbeCounter;
  constructor(probes: ProbeCounter) {
    super();
    this.probes = probes;
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else if (isProbe(request.url)) countProbe(this.probes, request.url, reply.statusCode);
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** What a test may add to the app (testutil/harness.ts): an observer of every answer, before it is sent. */
export interface AppOptions {
  onAnswer?: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => void;
}

/** The API as a Fastify app. `server.ts` (or the embedded default) only listens. */
export async function buildApp(deps: ApiDeps, options: AppOptions = {}): Promise<FastifyInstance> {
  const limits = { ...SERVER_LIMITS, ...deps.serverLimits };
  const app: FastifyInstance = Fastify({
    // Limits, timeouts and the answers to what never reaches a route (hardening.ts).
    ...serverOptions(nextRequestId, () => app.log, limits),
    logger: { level: deps.logLevel ?? 'info', serializers: { req: requestSerializer }, stream: deps.logStream ?? stdoutLogStream() },
    logController: new OneLinePerRequest(deps.metrics.probes),
    genReqId: nextRequestId,
    // Only behind a known proxy may X-Forwarded-For decide the client address (trial-page limits).
    trustProxy: deps.trustProxy ?? false,
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  const onAnswer = options.onAnswer;
  if (onAnswer) {
    app.addHook('onSend', (request, reply, payload, done) => {
      onAnswer(request, reply, payload);
      done(null, payload);
    });
  }
  registerErrorHandling(app);
  registerHardening(app, limits);
  registerDrain(app);
  registerLinger(app);
  // The documents are generated from the routes' own descriptions (openapi/spec.ts), once all are
  // registered; @fastify/swagger serves the public one to swagger-ui at /docs.
  const described = collectDescribedRoutes(app);
  const publicRoutes = () => described.filter((r) => !r.url.startsWith('/admin/'));
  await app.register(swagger, { openapi: {}, transformObject: () => buildDocument(publicRoutes(), PUBLIC_INFO) as never });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', async () => app.swagger());
  let adminDocument: Record<string, unknown> | null = null;
  app.decorate('apiDocuments', () => ({
    public: app.swagger() as unknown as Record<string, unknown>,
    admin: adminDocument ??= buildDocument(described.filter((r) => r.url.startsWith('/admin/')), ADMIN_INFO),
  }));
  app.register(async (admin) => {
    admin.addHook('onRequest', async (request, reply) => {
      await requireAdmin(request, deps.adminToken, deps.throttle, deps.clock());
      reply.header('Cache-Control', 'no-store');
    });
    admin.get('/admin/openapi.json', async () => app.apiDocuments().admin);
  });

  registerOpsRoutes(app, deps);
  registerTrackRoutes(app, deps);
  registerBatchRoute(app, deps);
  registerDetectedTrackRoute(app, deps);
  registerCarrierRoutes(app, deps);
  registerUsageRoutes(app, deps);
  registerLaneRoutes(app, deps);
  registerEstimateRoutes(app, deps);
  registerAdminRoutes(app, deps);
  registerTrialRoutes(app, deps);
  registerBillingRoutes(app, deps);
  const push = deps.push;
  if (push) {
    // Their bodies' JSON errors are refused after the key checks, as the batch's are (bodies.ts).
    await app.register(async (scope) => {
      deferJsonErrors(scope);
      registerTrackingRoutes(scope, deps, push);
      registerWebhookRoutes(scope, deps, push);
    });
    // The branding of the watches' tracking pages; management calls counted where push's are.
    if (deps.branding) registerBrandingRoutes(app, deps, deps.branding, push.kv);
    // The shop's customer's page of a watch or an order: no key, the link's token is the permission.
    registerTrackingPages(app, deps, push, deps.branding ?? null);
    // Notices to the shop's customers: settings and list (management calls), providers' webhooks, unsubscribe.
    if (deps.notices) {
      const notices = deps.notices;
      registerCustomerNoticeRoutes(app, { ...deps, notices }, push.kv);
      // Links in notices name the address this server is reached at (PUBLIC_BASE_URL, else where it listens).
      notices.bindBase(() => publicBaseOf(deps, app));
    }
  }
  if (deps.analyzer) registerAnalysisRoutes(app, deps, deps.analyzer);
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI documents generated from the routes (served at /openapi.json and /admin/openapi.json). */
    apiDocuments(): { public: Record<string, unknown>; admin: Record<string, unknown> };
  }
}
