import { randomBytes } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ApiDeps } from './deps.ts';
import { registerErrorHandling } from './errors.ts';
import { registerDrain } from './drain.ts';
import { SERVER_LIMITS, registerHardening, serverOptions } from './hardening.ts';
import { requestSerializer } from './log-redaction.ts';
import { stdoutLogStream } from './log-stream.ts';
import { buildOpenApi } from './openapi.ts';
import { deferJsonErrors } from './bodies.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerAnalysisRoutes } from './routes/analyses.ts';
import { registerBatchRoute } from './routes/batch.ts';
import { registerBillingRoutes } from './routes/billing.ts';
import { registerCarrierRoutes } from './routes/carriers.ts';
import { registerLaneRoutes } from './routes/lanes.ts';
import { registerOpsRoutes } from './routes/ops.ts';
import { registerDetectedTrackRoute } from './routes/track-detect.ts';
import { registerTrackRoutes } from './routes/track.ts';
import { registerTrackingRoutes } from './routes/trackings.ts';
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
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** The API as a Fastify app. `server.ts` (or the embedded default) only listens. */
export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  const limits = { ...SERVER_LIMITS, ...deps.serverLimits };
  const app: FastifyInstance = Fastify({
    // Limits, timeouts and the answers to what never reaches a route (hardening.ts).
    ...serverOptions(nextRequestId, () => app.log, limits),
    logger: { level: deps.logLevel ?? 'info', serializers: { req: requestSerializer }, stream: deps.logStream ?? stdoutLogStream() },
    logController: new OneLinePerRequest(),
    genReqId: nextRequestId,
    // Only behind a known proxy may X-Forwarded-For decide the client address (trial-page limits).
    trustProxy: deps.trustProxy ?? false,
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerErrorHandling(app);
  registerHardening(app, limits);
  registerDrain(app);
  await app.register(swagger, { mode: 'static', specification: { document: buildOpenApi(deps.product) as never } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', async () => app.swagger());

  registerOpsRoutes(app, deps);
  registerTrackRoutes(app, deps);
  registerBatchRoute(app, deps);
  registerDetectedTrackRoute(app, deps);
  registerCarrierRoutes(app, deps);
  registerUsageRoutes(app, deps);
  registerLaneRoutes(app, deps);
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
  }
  if (deps.analyzer) registerAnalysisRoutes(app, deps, deps.analyzer);
  return app;
}
