import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody, ErrorCode } from '../../../lib/schemas/index.ts';

/** HTTP status of every error code the service answers with (one place, as Unkey's codeToStatus). */
export const CODE_TO_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  invalid_awb: 400,
  unsupported_carrier: 400,
  invalid_pincode: 400,
  invalid_date: 400,
  carrier_not_detected: 400,
  idempotency_key_reused: 422,
  invalid_analysis: 400,
  plan_feature_unavailable: 403,
  analysis_not_found: 404,
  analyzer_quota_exceeded: 429,
  missing_api_key: 401,
  invalid_api_key: 401,
  unauthorized: 401,
  payment_required: 402,
  shipment_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  invalid_url: 400,
  too_many_endpoints: 409,
  rate_limit_exceeded: 429,
  plan_quota_exceeded: 429,
  daily_quota_exceeded: 429,
  internal_error: 500,
  upstream_error: 502,
  payload_too_large: 413,
  unsupported_media_type: 415,
  header_fields_too_large: 431,
  request_timeout: 408,
  too_many_attempts: 429,
  invalid_signature: 400,
  payment_in_progress: 409,
  invalid_branding: 400,
  consent_required: 400,
  invalid_customer: 400,
};

/** An answer with the standard error body; thrown by handlers, rendered by the root error handler. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly headers: Record<string, string | number>;
  constructor(
    code: ErrorCode,
    message: string,
    headers: Record<string, string | number> = {},
  ) {
    super(message);
    this.code = code;
    this.headers = headers;
    this.name = 'ApiError';
  }

  get status(): number {
    return CODE_TO_STATUS[this.code];
  }
}

export function errorBody(code: ErrorCode, message: string, requestId: string): ErrorBody {
  return { error: { code, message, request_id: requestId } };
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(errorBody(error.code, error.message, request.id));
}

/** Maps Fastify's own errors (bad JSON, body too large, ...) to the closed set of codes. */
function fromFastifyError(error: FastifyError, bodyLimit: number): ApiError {
  const status = error.statusCode ?? 500;
  if (status === 404) return new ApiError('not_found', 'No such resource.');
  if (status === 405) return new ApiError('method_not_allowed', 'Method not allowed on this resource.');
  if (status === 401) return new ApiError('unauthorized', error.message);
  // The route's own limit (PUT /v1/branding takes more than the 64 KiB of every other JSON body).
  if (status === 413) return new ApiError('payload_too_large', `The request body is larger than this service accepts (${bodyLimit / 1024} KiB).`);
  if (status === 415) {
    return new ApiError('unsupported_media_type', `Unsupported Content-Type: ${error.message.replace(/^Unsupported Media Type:?\s*/i, '') || 'none'}.`);
  }
  if (status >= 400 && status < 500) return new ApiError('bad_request', `Bad request: ${error.message}`);
  return new ApiError('internal_error', 'An unexpected error occurred. Quote the request id to support.');
}

/** One root handler for every error; unexpected ones are logged and answered without internals. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, request, error);
    const apiError = fromFastifyError(error as FastifyError, request.routeOptions.bodyLimit ?? 64 * 1024);
    if (apiError.code === 'internal_error') request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, request, apiError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, request, new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)));
}

/**
 * Answers 405 for every other method on a path that exists (Fastify would say 404). The refusal
 * comes in `onRequest`, before any body is read: a bad or huge body sent with a wrong method still
 * hears 405. HEAD is refused only when the route serves no GET (Fastify answers HEAD for GET
 * routes) or when `refuseHead` says so (a GET that costs the caller, such as a lookup).
 */
export function methodNotAllowed(app: FastifyInstance, url: string, allowed: string[], options: { refuseHead?: boolean } = {}): void {
  const answersHead = allowed.includes('GET') && !options.refuseHead;
  // Every method Node's parser passes is routable (hardening.ts adds the ones Fastify lacks).
  const others = app.supportedMethods.filter((m) => !allowed.includes(m) && !(m === 'HEAD' && answersHead));
  const refusal = () => new ApiError('method_not_allowed', `Use ${allowed.join(' or ')} on this resource.`, { Allow: allowed.join(', ') });
  app.route({
    method: others,
    url,
    onRequest: async () => {
      throw refusal();
    },
    handler: async () => {
      throw refusal();
    },
  });
}
