/**
 * OpenAPI 3.1 documents generated from the routes' descriptions (openapi/spec.ts): the public API's
 * (`/openapi.json`) and the operators' (`/admin/openapi.json`). Schemas come from zod
 * (`z.toJSONSchema`), error answers from each route's codes through CODE_TO_STATUS, so neither can
 * drift from what the code answers; the answer-validating test (contract.test.ts) checks that.
 */
import { z } from 'zod';
import { ErrorBodySchema, TrackingRecordSchema, UsageRecordSchema, type ErrorCode } from '../../../lib/schemas/index.ts';
import { errorCodesOf, type DescribedRoute, type HeaderName, type RouteSpec } from './spec.ts';
import { CODE_TO_STATUS } from '../http/errors.ts';
import {
  EtaChangedEventBodySchema, OWN_SHAPE_EVENT_TYPES, RunningLateEventBodySchema, SCHEMA_NAMES, TestEventBodySchema, TrackingEventBodySchema,
} from './schemas.ts';
import { TRACKING_EVENT_TYPES } from '../../../lib/push/index.ts';

type Json = Record<string, unknown>;

const HEADERS: Record<HeaderName | 'X-Request-Id', { description: string; schema: Json }> = {
  'X-Request-Id': { description: 'The request id, also in every error body: quote it to support.', schema: { type: 'string' } },
  'RateLimit-Limit': { description: 'Requests allowed per second (the burst limit).', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Remaining': { description: 'Requests left in the current second.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the burst window resets.', schema: { type: 'integer', minimum: 0 } },
  'X-Lookups-Remaining': { description: 'Lookups left in the plan period.', schema: { type: 'integer', minimum: 0 } },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
  'Idempotent-Replayed': {
    description: '`true` when the answer is the first answer to this Idempotency-Key, replayed.', schema: { type: 'string', enum: ['true'] },
  },
  Allow: { description: 'The methods this resource accepts.', schema: { type: 'string' } },
  'Cache-Control': { description: 'Never stored: the answer may name a key or an e-mail address.', schema: { type: 'string' } },
  Location: { description: 'Where the created resource is.', schema: { type: 'string' } },
  'Content-Disposition': { description: 'A file name for the download.', schema: { type: 'string' } },
};

const LIMIT_HEADERS: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

/** Schemas named once and referenced from every route that answers them. */
const NAMED: [string, z.ZodType][] = [['TrackingRecord', TrackingRecordSchema], ['UsageRecord', UsageRecordSchema], ['ErrorBody', ErrorBodySchema]];

/** OpenAPI paths use `{param}` where Fastify uses `:param`. */
export function openApiPath(fastifyUrl: string): string {
  return fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function headerObjects(required: HeaderName[], optional: HeaderName[]): Json {
  const out: Json = { 'X-Request-Id': { ...HEADERS['X-Request-Id'], required: true } };
  for (const name of required) out[name] = { ...HEADERS[name], required: true };
  for (const name of optional) if (!(name in out)) out[name] = { ...HEADERS[name], required: false };
  return out;
}

/** The headers a route's answers past its key checks carry, by its kind of limits. */
function limitHeadersOf(spec: RouteSpec): HeaderName[] {
  if (spec.limits === 'metered') return [...LIMIT_HEADERS, 'X-Lookups-Remaining'];
  if (spec.limits === 'burst') return LIMIT_HEADERS;
  return [];
}

/** Turns zod schemas into JSON Schemas, sharing the named ones as components. */
class SchemaSet {
  private readonly registry = z.registry<{ id: string }>();
  private readonly names = new Map<z.ZodType, string>();

  constructor() {
    for (const [name, schema] of NAMED) this.add(name, schema);
    // Named schemas nested in others are shared too, when the document uses them.
    for (const [schema, name] of SCHEMA_NAMES) this.registry.add(schema, { id: name });
  }

  /** A `$ref` to `schema`, registered under `name` unless it is registered already. */
  ref(schema: z.ZodType, name: string): Json {
    return { $ref: `#/components/schemas/${this.names.get(schema) ?? this.add(SCHEMA_NAMES.get(schema) ?? name, schema)}` };
  }

  private add(name: string, schema: z.ZodType): string {
    let unique = name;
    const taken = (id: string) => [...this.names.values()].includes(id) || ([...SCHEMA_NAMES].some(([s, n]) => n === id && s !== schema));
    for (let i = 2; taken(unique); i++) unique = `${name}${i}`;
    this.names.set(schema, unique);
    this.registry.add(schema, { id: unique });
    return unique;
  }

  components(): Record<string, Json> {
    const { schemas } = z.toJSONSchema(this.registry, {
      target: 'draft-2020-12', unrepresentable: 'any', uri: (id) => `#/components/schemas/${id}`,
    }) as { schemas: Record<string, Json> };
    for (const schema of Object.values(schemas)) {
      delete schema.$schema;
      delete schema.id;
    }
    return schemas;
  }
}

/** A request's input (path, query, header) as OpenAPI parameters. */
function parameters(spec: RouteSpec): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query' | 'header', object: z.ZodObject | undefined) => {
    if (!object) return;
    const json = z.toJSONSchema(object, { target: 'draft-2020-12', unrepresentable: 'any', io: 'input' }) as {
      properties?: Record<string, Json>; required?: string[];
    };
    for (const [name, schema] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = schema;
      out.push({
        name, in: where, required: where === 'path' || (json.required ?? []).includes(name),
        ...(description ? { description } : {}), schema: rest,
      });
    }
  };
  add('path', spec.params);
  add('query', spec.query);
  add('header', spec.headers);
  return out;
}

function pascal(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function operation(spec: RouteSpec, schemas: SchemaSet): Json {
  const limits = limitHeadersOf(spec);
  const responses: Json = {};
  for (const [status, response] of Object.entries(spec.responses)) {
    responses[status] = {
      description: response.description,
      headers: headerObjects(
        [...(response.limits ? limitHeadersOf({ ...spec, limits: response.limits }) : limits), ...(response.headers ?? [])],
        response.optionalHeaders ?? [],
      ),
      ...(response.schema ? {
        content: {
          'application/json': {
            schema: schemas.ref(response.schema, `${pascal(spec.operationId)}${status === '200' ? '' : status}Answer`),
            ...(response.example ? { example: response.example } : {}),
          },
        },
      } : {}),
      ...(response.text ? { content: Object.fromEntries(response.text.split(' ').map((type) => [type, { schema: textSchemaOf(type) }])) } : {}),
    };
  }
  // Errors grouped by status; each status's body names exactly the codes this route can send with it.
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(spec)) byStatus.set(CODE_TO_STATUS[code], [...(byStatus.get(CODE_TO_STATUS[code]) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // The key refusals come before anything is counted; past them, the limits may show (a 429 of
    // the limits always shows them, and a burst refusal says when to retry).
    const keyRefusal = codes.every((c) => c === 'missing_api_key' || c === 'invalid_api_key' || c === 'payment_required' || c === 'unauthorized');
    const retryKnown = codes.every((c) => c === 'rate_limit_exceeded' || c === 'too_many_attempts');
    const required: HeaderName[] = status === 429 ? [...limits, ...(retryKnown ? ['Retry-After' as const] : [])] : [];
    const optional: HeaderName[] = keyRefusal ? [] : [...limits, ...(status === 429 ? ['Retry-After' as const] : [])];
    responses[status] = {
      description: codes.join(', '),
      headers: headerObjects(required, optional),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorBody' },
              { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } },
            ],
          },
        },
      },
    };
  }
  const params = parameters(spec);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    ...(spec.tags ? { tags: spec.tags } : {}),
    ...(spec.caller === 'none' ? { security: [] } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(spec.body ? {
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: SCHEMA_NAMES.has(spec.body)
              ? schemas.ref(spec.body, SCHEMA_NAMES.get(spec.body)!)
              : z.toJSONSchema(spec.body, { target: 'draft-2020-12', unrepresentable: 'any', io: 'input' }) as Json,
            ...(spec.bodyExample ? { example: spec.bodyExample } : {}),
          },
          ...(spec.textBody ? {
            [spec.textBody.contentType]: {
              schema: { type: 'string', description: spec.textBody.description },
              ...(spec.textBody.example ? { example: spec.textBody.example } : {}),
            },
          } : {}),
        },
      },
    } : {}),
    responses,
  };
}

function strip(schema: Json): Json {
  delete schema.$schema;
  return schema;
}

/** An event the API sends to the customer's endpoints (OpenAPI 3.1 `webhooks`). */
export interface WebhookSpec {
  summary: string;
  description: string;
  schema: z.ZodType;
}

export interface DocumentInfo {
  title: string;
  description: string;
  securitySchemes: Record<string, Json>;
  webhooks?: Record<string, WebhookSpec>;
}

/** Standard Webhooks v1 headers every delivery carries (contracts.md "Push"). */
const WEBHOOK_HEADERS: Json[] = [
  {
    name: 'webhook-id', in: 'header', required: true,
    description: 'The event id: the same for every attempt and resend of one event (drop one you have had).',
    schema: { type: 'string' },
  },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds of this attempt.', schema: { type: 'string' } },
  {
    name: 'webhook-signature', in: 'header', required: true,
    description: 'v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"> with the endpoint\'s secret; two, space-separated, during a rotation.',
    schema: { type: 'string' },
  },
];

function webhookItem(name: string, spec: WebhookSpec, schemas: SchemaSet): Json {
  return {
    post: {
      operationId: `webhook_${name.replace(/[^A-Za-z0-9]+/g, '_')}`,
      summary: spec.summary,
      description: spec.description,
      security: [],
      parameters: WEBHOOK_HEADERS,
      requestBody: {
        required: true,
        content: { 'application/json': { schema: schemas.ref(spec.schema, `${pascal(name.replace(/[^A-Za-z0-9]+/g, ''))}Body`) } },
      },
      responses: { '2XX': { description: 'Received: any 2xx within 15 s. 410 disables the endpoint; anything else is retried.' } },
    },
  };
}

/** The OpenAPI 3.1 document of `routes`. */
export function buildDocument(routes: DescribedRoute[], info: DocumentInfo): Json {
  const schemas = new SchemaSet();
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = openApiPath(route.url);
    const op = operation(route.spec, schemas);
    if (op.requestBody) strip(((op.requestBody as Json).content as Record<string, Json>)['application/json']!.schema as Json);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: op };
  }
  const webhooks: Record<string, Json> = {};
  for (const [name, spec] of Object.entries(info.webhooks ?? {})) webhooks[name] = webhookItem(name, spec, schemas);
  const components = schemas.components();
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: '1.0.0', description: info.description },
    servers: [{ url: '/' }],
    security: Object.keys(info.securitySchemes).map((name) => ({ [name]: [] })),
    paths,
    ...(info.webhooks ? { webhooks } : {}),
    components: { securitySchemes: info.securitySchemes, schemas: reachable([paths, webhooks], components) },
  };
}

/** The components `paths` refer to, directly or through other components. */
function reachable(paths: unknown, components: Record<string, Json>): Record<string, Json> {
  const kept = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')) {
          const name = inner.slice('#/components/schemas/'.length);
          if (!kept.has(name)) {
            kept.add(name);
            visit(components[name]);
          }
        } else visit(inner);
      }
    }
  };
  visit(paths);
  return Object.fromEntries(Object.entries(components).filter(([name]) => kept.has(name)));
}

export const PUBLIC_INFO: DocumentInfo = {
  title: 'Shipment tracking API for Indian couriers',
  description: 'One GET tracks a consignment of any supported carrier and answers one uniform JSON document. '
    + 'Every /v1/track call that is answered 200 or 404 consumes one lookup. '
    + 'A typed TypeScript client is in packages/client.',
  securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'trk_live_… or trk_test_… (sandbox carriers) key.' } },
  webhooks: {
    tracking: {
      summary: 'A watched shipment changed',
      description: `One of ${TRACKING_EVENT_TYPES.filter((t) => !OWN_SHAPE_EVENT_TYPES.has(t)).join(', ')} (the most specific that applies): `
        + 'a new event, status, stage, attempt count, or is_stuck turning true.',
      schema: TrackingEventBodySchema,
    },
    'tracking.eta_changed': {
      summary: 'A watched shipment\'s predicted delivery day moved',
      description: 'insights.prediction.delivery_date moved by one day or more since the day last told (or shown by the watch call); '
        + 'at most one per shipment per 6 hours (a move within them is told at the next poll after, if it still holds). '
        + 'data.tracking is the record; data.previous_delivery_date the day told before.',
      schema: EtaChangedEventBodySchema,
    },
    'tracking.running_late': {
      summary: 'A watched shipment is running late',
      description: 'The on-time probability fell below the watch\'s running_late_below (default 0.5) while the shipment moves: '
        + 'the promise\'s (P(delivered by the end of the watch\'s promised_by), also in tracking.insights.prediction.promise), '
        + 'without a promise the carrier EDD\'s (insights.prediction.on_time_probability). Once per watch; again only after the '
        + 'probability came back to the threshold or above; never after delivery. data.promised_by (or null), '
        + 'data.on_time_probability and data.delivery_date (the predicted day) say why.',
      schema: RunningLateEventBodySchema,
    },
    'webhook.test': {
      summary: 'A test event',
      description: 'Sent by POST /v1/webhooks/{id}/test to that endpoint only.',
      schema: TestEventBodySchema,
    },
  },
};

export const ADMIN_INFO: DocumentInfo = {
  title: 'Shipment tracking API: operators\' admin API',
  description: 'Keys (create, read, suspend, resume, revoke, renew) and payments. '
    + 'Every call needs Authorization: Bearer <ADMIN_TOKEN>; after 10 wrong tokens in 15 minutes an address is refused (429 too_many_attempts).',
  securitySchemes: { AdminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN of the deployment.' } },
};

/** A non-JSON body's schema: an image is bytes, anything else text. */
function textSchemaOf(type: string): { type: 'string'; format?: 'binary' } {
  return type.startsWith('image/') ? { type: 'string', format: 'binary' } : { type: 'string' };
}
