/**
 * The description a route carries (its `config.api`): the zod schemas of its input and output, the
 * headers it answers with and the error codes it can throw. The OpenAPI documents (openapi/document.ts)
 * are generated from these, and the handlers read their bodies through the same schemas
 * (bodies.ts). Fastify itself does not validate them: on every `/v1/` route the key is checked
 * before a malformed input is refused (decisions.md), which a validation ahead of the handler
 * would turn around.
 */
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { ErrorCode } from '../../../lib/schemas/index.ts';

/** Response headers the API sends; each route names the ones it sends (openapi/document.ts defines them). */
export type HeaderName =
  | 'RateLimit-Limit' | 'RateLimit-Remaining' | 'RateLimit-Reset' | 'X-Lookups-Remaining'
  | 'Retry-After' | 'Idempotent-Replayed' | 'Allow' | 'Cache-Control' | 'Location' | 'Content-Disposition';

export interface ResponseSpec {
  description: string;
  /** The JSON body; none for 204. */
  schema?: z.ZodType;
  /** A body of another type (text/csv, text/html; images as bytes); several types separated by spaces. */
  text?: string;
  /** Headers always sent with this answer, beyond those the route's kind implies. */
  headers?: HeaderName[];
  /** Headers sent with this answer only sometimes. */
  optionalHeaders?: HeaderName[];
  example?: unknown;
  /** This answer's limit headers, when they differ from the route's (`limits`). */
  limits?: RouteSpec['limits'];
}

/**
 * Who may call: `key` an X-API-Key (401/402 first), `none` anyone, `admin` the operators' bearer
 * token (its own document, /admin/openapi.json).
 */
export type Caller = 'key' | 'none' | 'admin';

export interface RouteSpec {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  caller: Caller;
  /**
   * How the key's limits show: `metered` (a lookup: RateLimit-* and X-Lookups-Remaining on every
   * answer past the key checks), `burst` (a management call: RateLimit-* and its own 429),
   * `none` (no limit applies).
   */
  limits?: 'metered' | 'burst' | 'none';
  /** GET /v1/usage answers past the period too: no 402. */
  pastPeriodAllowed?: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Request headers (other than X-API-Key / Authorization). */
  headers?: z.ZodObject;
  body?: z.ZodType;
  bodyExample?: unknown;
  /** Another type the body may have (text/csv), read as text by the handler. */
  textBody?: { contentType: string; description: string; example?: string };
  /** Success answers by status. */
  responses: Record<number, ResponseSpec>;
  /**
   * Error codes the handler itself can throw (the caller's and the body's common ones are added by
   * the document: see `errorCodesOf`). Mapped to statuses through CODE_TO_STATUS.
   */
  errors: readonly ErrorCode[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's description, from which the OpenAPI documents are generated. */
    api?: RouteSpec;
  }
}

/** Route options that attach `spec` to a route: `app.get(url, api(spec), handler)`. */
export function api(spec: RouteSpec): { config: { api: RouteSpec } } {
  return { config: { api: spec } };
}

/** A described route as registered: its method, Fastify URL (`:param`) and description. */
export interface DescribedRoute {
  method: string;
  url: string;
  spec: RouteSpec;
}

/**
 * Collects every described route of `app` (and of the plugins registered after this call), in
 * registration order. Call before registering routes.
 */
export function collectDescribedRoutes(app: FastifyInstance): DescribedRoute[] {
  const routes: DescribedRoute[] = [];
  app.addHook('onRoute', (route) => {
    const spec = route.config?.api;
    if (!spec) return;
    for (const method of [route.method].flat()) {
      // Fastify adds a HEAD route for each GET: the GET describes it.
      if (method !== 'HEAD') routes.push({ method, url: route.url, spec });
    }
  });
  return routes;
}

/**
 * Every error code a route can answer with: its own, the key checks' (401, and 402 unless the
 * route answers past the period), the burst limit's 429, a body's (400, 413, 415) and 500.
 */
export function errorCodesOf(spec: RouteSpec): ErrorCode[] {
  const codes = new Set<ErrorCode>(spec.errors);
  if (spec.caller === 'key') {
    codes.add('missing_api_key').add('invalid_api_key');
    if (!spec.pastPeriodAllowed) codes.add('payment_required');
  }
  if (spec.caller === 'admin') codes.add('unauthorized').add('too_many_attempts').add('unsupported_media_type');
  if (spec.limits === 'metered' || spec.limits === 'burst') codes.add('rate_limit_exceeded');
  if (spec.body) codes.add('bad_request').add('payload_too_large').add('unsupported_media_type');
  // Any request may be refused before its route reads it (hardening.ts): no Host, too many or too
  // large header fields, a body too slow to arrive.
  codes.add('bad_request').add('header_fields_too_large').add('request_timeout');
  codes.add('internal_error');
  return [...codes];
}

/** An operators' call: the admin token, never cached, in the admin document. */
export const adminCall = (spec: Omit<RouteSpec, 'caller' | 'tags'>) => api({
  ...spec, caller: 'admin', tags: ['Admin'],
  responses: Object.fromEntries(Object.entries(spec.responses).map(([status, r]) => [
    status, { ...r, headers: ['Cache-Control' as const, ...(r.headers ?? [])] },
  ])),
});
