import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ApiDeps } from './deps.ts';
import { registerErrorHandling } from './errors.ts';
import { stdoutLogStream } from './log-stream.ts';
import { buildOpenApi } from './openapi.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerLaneRoutes } from './routes/lanes.ts';
import { registerOpsRoutes } from './routes/ops.ts';
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

/** A key-shaped string: its first 16 characters (the prefix) may be logged, the rest never. */
const KEY_IN_TEXT = /(trk_(?:live|test)_[A-Za-z0-9]{7})[A-Za-z0-9]+/g;

/**
 * Logs name a key only by its prefix; the key header and admin token never reach a log line, and
 * a key a client or operator put in a URL (a query string, a full key for an admin prefix) is cut.
 */
const requestSerializer = (request: { method: string; url: string; id: string; keyPrefix?: string }) => ({
  method: request.method,
  url: request.url.replace(KEY_IN_TEXT, '$1…'),
  id: request.id,
  key_prefix: request.keyPrefix,
});

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
  const app = Fastify({
    logger: { level: deps.logLevel ?? 'info', serializers: { req: requestSerializer }, stream: deps.logStream ?? stdoutLogStream() },
    logController: new OneLinePerRequest(),
    genReqId: nextRequestId,
    // Only behind a known proxy may X-Forwarded-For decide the client address (trial-page limits).
    trustProxy: deps.trustProxy ?? false,
    bodyLimit: 64 * 1024,
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerErrorHandling(app);
  await app.register(formbody);
  await app.register(swagger, { mode: 'static', specification: { document: buildOpenApi(deps.product) as never } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', async () => app.swagger());

  registerOpsRoutes(app, deps);
  registerTrackRoutes(app, deps);
  registerUsageRoutes(app, deps);
  registerLaneRoutes(app, deps);
  registerAdminRoutes(app, deps);
  registerTrialRoutes(app, deps);
  if (deps.push) {
    registerTrackingRoutes(app, deps, deps.push);
    registerWebhookRoutes(app, deps, deps.push);
  }
  return app;
}
