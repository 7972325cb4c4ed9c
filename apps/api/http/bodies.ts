/**
 * The request bodies of the `/v1/` routes, read through zod before anything else touches them: no
 * body value is coerced by hand (`String()` of `{"toString": 1}` threw, and answered 500). Each
 * route reads its body after the key checks, as a lookup reports a bad input after them; a
 * malformed body is a 400 in the standard error body, with the code a single field deserves.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PAGE_LANGUAGES } from '../../../lib/push/index.ts';
import { NOTICE_CHANNELS } from '../../../lib/buyer-notices/contact.ts';
import type { ErrorCode } from '../../../lib/schemas/index.ts';
import { isIstDay } from '../../../lib/time/ist-day.ts';
import { ApiError } from './errors.ts';

/** A body that is not JSON: kept for the handler, which refuses it after the key checks. */
export const NOT_JSON = Symbol('not JSON');

/**
 * JSON bodies of the routes registered in `scope` are parsed without refusing: a syntax error
 * becomes NOT_JSON, so the key is checked before the body is refused, as for every other bad
 * input. (JSON.parse keeps a `__proto__` key as a plain own property; the schemas read known
 * fields only, so it reaches nothing.)
 */
export function deferJsonErrors(scope: FastifyInstance, options: { bodyLimit?: number } = {}): void {
  scope.addContentTypeParser('application/json', { parseAs: 'string', ...options }, (_request, text, done) => {
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(null, NOT_JSON);
    }
  });
}

/** Longest text any body field may hold: far beyond every real value, short of a memory burden. */
const MAX_TEXT = 4_096;
const text = z.string().max(MAX_TEXT);

/**
 * `POST /v1/trackings`: `{ "carrier": slug|alias, "awb": "...", "promised_by"?: "YYYY-MM-DD"|null,
 * "running_late_below"?: 0..1 }` (contracts.md "A shop's promise").
 */
export const WatchBodySchema = z.object({
  carrier: text,
  awb: text,
  promised_by: text.refine(isIstDay, 'must be a calendar day written YYYY-MM-DD (the day promised to the customer, IST)').nullish(),
  running_late_below: z.number('must be a number from 0 to 1').min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1').nullish(),
  order_id: text.regex(/^[A-Za-z0-9._:#-]{1,64}$/, 'must be 1 to 64 letters, digits or . _ : # -').nullish(),
  language: z.enum(PAGE_LANGUAGES, `must be one of ${PAGE_LANGUAGES.join(', ')}`).nullish(),
  /** The shop's customer's contact for notices (contracts.md "Customer notices"); null erases it. */
  customer: z.object({
    phone: text.nullish(),
    email: text.nullish(),
    language: z.enum(PAGE_LANGUAGES, `must be one of ${PAGE_LANGUAGES.join(', ')}`).nullish(),
    channels: z.array(z.enum(NOTICE_CHANNELS, `must each be one of ${NOTICE_CHANNELS.join(', ')}`)).max(3, 'names at most 3 channels').nullish(),
    consent: z.boolean('must be true: the shop confirms its customer agreed to these notices').nullish(),
  }, 'must be an object such as {"phone": "+919876543210", "channels": ["whatsapp", "sms"], "consent": true}').nullish(),
});

/** One item of `POST /v1/track/batch`; a bad item refuses that item only. */
export const BatchItemSchema = z.object({ carrier: text.nullish(), awb: text });

/** `POST /v1/track/batch`: the envelope (items are read one by one, see BatchItemSchema). */
export const BatchBodySchema = z.object({ items: z.array(z.unknown()) });

/** `POST /v1/webhooks`: what EndpointStore checks further (URL rules, event types). */
export const WebhookBodySchema = z.object({
  url: text,
  events: z.array(text).nullish(),
  description: text.nullish(),
});

/** The error code a field's problem deserves (as a single lookup reports it); else `fallback`. */
const FIELD_CODES: Record<string, ErrorCode> = {
  awb: 'invalid_awb', carrier: 'unsupported_carrier', url: 'invalid_url', promised_by: 'invalid_date', consent: 'consent_required',
  customer: 'invalid_customer', phone: 'invalid_customer', email: 'invalid_customer', channels: 'invalid_customer',
};

/**
 * The body as `schema` reads it, or the 400 it deserves. `example` shows the expected shape in the
 * message. The message names the field, never echoes its value.
 */
export function readBody<S extends z.ZodType>(schema: S, body: unknown, example: string, fallback: ErrorCode = 'bad_request'): z.output<S> | ApiError {
  if (body === NOT_JSON) return new ApiError('bad_request', `The body is not valid JSON. Send a JSON object, e.g. ${example}.`);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return new ApiError('bad_request', `Send a JSON object, e.g. ${example}.`);
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.');
  const code = FIELD_CODES[String(issue.path.at(-1))] ?? fallback;
  return new ApiError(code, `${field ? `"${field}"` : 'The body'}: ${issue.message}. Expected e.g. ${example}.`);
}
