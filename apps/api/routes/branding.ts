import type { FastifyInstance } from 'fastify';
import { BrandingInputSchema, BrandingSchema, DEFAULT_BRANDING, parseBranding, type BrandingStore } from '../../../lib/branding/index.ts';
import type { Kv } from '../../../lib/kv/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { managementKey } from '../auth/management-key.ts';
import { NOT_JSON, deferJsonErrors } from '../http/bodies.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { api, type RouteSpec } from '../openapi/spec.ts';

/** What these routes use of the API's dependencies. */
type BrandingDeps = Pick<ApiDeps, 'access' | 'clock'>;

/**
 * A logo of 51,200 bytes is 68,268 characters of base64; the rest of the body is a few hundred.
 * The limit leaves room for a logo somewhat over its own limit to reach parseBranding, which then
 * says how large it was (a 413 could only say the body was too large).
 */
export const BRANDING_BODY_LIMIT = 96 * 1024;

const EXAMPLE_LOGO = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQKn4BAAIgAXZmNuK1AAAAAElFTkSuQmCC';
const EXAMPLE = {
  name: 'Chai Point', accent_color: '#1a73e8', logo: EXAMPLE_LOGO, support_url: 'https://chaipoint.example.com/help',
  mask_awb: true, frame_ancestors: ['https://chaipoint.example.com'],
};

/** A branding call: a key's management call (no lookup consumed; the burst limit), as webhooks are. */
const brandingCall = (spec: Omit<RouteSpec, 'caller' | 'limits' | 'tags'>) => api({ ...spec, caller: 'key', limits: 'burst', tags: ['Tracking page'] });

/**
 * The key's branding of its tracking pages (contracts.md "Tracking page"). Each key reads and
 * writes its own only: the document is found by the calling key's prefix, never by anything in the
 * request. `counters` is the store that counts management calls per second (push's, as the other
 * management calls), so the branding's store holds brandings and nothing else.
 */
export function registerBrandingRoutes(app: FastifyInstance, deps: BrandingDeps, store: BrandingStore, counters: Kv): void {
  app.get('/v1/branding', brandingCall({
    operationId: 'getBranding', summary: 'The key\'s branding of its tracking pages',
    description: 'A key that never set one reads the defaults: `name` null (the page shows no shop name), no colour, logo or support link, '
      + '`mask_awb` false, `frame_ancestors` empty (the page may not be framed).',
    responses: { 200: { description: 'The branding, or the defaults', schema: BrandingSchema, example: EXAMPLE } },
    errors: [],
  }), async (request, reply) => {
    const key = await managementKey(deps, counters, request, reply);
    return (await store.get(key.prefix)) ?? DEFAULT_BRANDING;
  });

  app.register(async (scope) => {
    // Bad JSON is refused after the key checks, as every /v1/ body is (bodies.ts).
    deferJsonErrors(scope, { bodyLimit: BRANDING_BODY_LIMIT });
    scope.put('/v1/branding', {
      bodyLimit: BRANDING_BODY_LIMIT,
      ...brandingCall({
        operationId: 'putBranding', summary: 'Set the key\'s branding of its tracking pages (replaces it whole)',
        description: 'A field left out takes its default (null, false, no origins). The logo is sent and stored here: PNG or JPEG, '
          + 'at most 51,200 bytes decoded, its bytes checked against the declared type; SVG and remote URLs are refused. '
          + '`frame_ancestors` lists the origins whose pages may frame the tracking page (https; http only for localhost and 127.0.0.1). '
          + 'A refused body changes nothing; the 400 `invalid_branding` names every problem.',
        body: BrandingInputSchema, bodyExample: EXAMPLE,
        responses: { 200: { description: 'The branding as stored (trimmed, lower-case colour, URLs as parsed)', schema: BrandingSchema, example: EXAMPLE } },
        errors: ['invalid_branding'],
      }),
    }, async (request, reply) => {
      const key = await managementKey(deps, counters, request, reply);
      if (request.body === NOT_JSON) throw new ApiError('bad_request', 'The body is not valid JSON. Send a JSON object, e.g. {"name": "Chai Point"}.');
      const parsed = parseBranding(request.body);
      if (!parsed.ok) {
        const count = parsed.problems.length === 1 ? 'a problem' : `${parsed.problems.length} problems`;
        throw new ApiError('invalid_branding', `The branding was not saved (${count}): ${parsed.problems.join('. ')}.`);
      }
      await store.put(key.prefix, parsed.doc);
      return parsed.doc;
    });
  });

  methodNotAllowed(app, '/v1/branding', ['GET', 'PUT']);
}
