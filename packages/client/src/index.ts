/**
 * The shipment-tracking API's TypeScript client: openapi-fetch over the types generated from the
 * API's OpenAPI document (schema.ts), a fetch that retries 429 and 502 answers as Retry-After
 * says, and Standard Webhooks signature verification of push deliveries.
 */
import createClient, { type Client } from 'openapi-fetch';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components, paths } from './schema.ts';

export type { components, paths, operations } from './schema.ts';
export type Schemas = components['schemas'];
export type TrackingRecord = Schemas['TrackingRecord'];
export type UsageRecord = Schemas['UsageRecord'];
export type ErrorBody = Schemas['ErrorBody'];
export type Watch = Schemas['Watch'];
export type Endpoint = Schemas['Endpoint'];
/** `insights.prediction` of a record: the most likely delivery day, its p80 / p90 windows, its basis. */
export type Prediction = NonNullable<TrackingRecord['insights']['prediction']>;
/** `GET /v1/estimate/{origin_pincode}/{destination_pincode}`'s answer. */
export type EstimateAnswer = Schemas['EstimateAnswer'];
/** Bodies of the deliveries an endpoint receives (the documents' `webhooks`). */
export type TrackingEventBody = Schemas['TrackingEventBody'];
export type EtaChangedEventBody = Schemas['EtaChangedEventBody'];
export type RunningLateEventBody = Schemas['RunningLateEventBody'];
export type TrackingClient = Client<paths>;

export interface RetryOptions {
  /** Further tries after the first; default 2. */
  retries?: number;
  /** A Retry-After longer than this (seconds) is not waited for: the answer is returned; default 5. */
  maxWaitSeconds?: number;
  /** Wait before a retry of a 502 (which has no Retry-After), doubled each time; default 500 ms. */
  backoffMs?: number;
  /** How to wait (tests pass a fake); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

export interface ClientOptions extends RetryOptions {
  /** Where the API is, e.g. http://127.0.0.1:8080 (no trailing /v1). */
  baseUrl: string;
  /** A trk_live_… or trk_test_… key, sent as X-API-Key. */
  apiKey: string;
  /** The fetch to call; default globalThis.fetch. */
  fetch?: (request: Request) => Promise<Response>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Seconds of a Retry-After header (seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, nowMs = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/**
 * A fetch that tries again on 429 (only when Retry-After says how long, and not longer than
 * `maxWaitSeconds`: a used-up daily or period quota is not waited out) and on 502 (the carrier
 * was unreachable: nothing was consumed), up to `retries` times.
 */
export function retryingFetch(fetchFn: (request: Request) => Promise<Response>, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const retries = options.retries ?? 2;
  const maxWait = options.maxWaitSeconds ?? 5;
  const backoff = options.backoffMs ?? 500;
  const sleep = options.sleep ?? defaultSleep;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetchFn(request.clone());
      if (attempt >= retries || (response.status !== 429 && response.status !== 502)) return response;
      let waitMs: number;
      if (response.status === 429) {
        const seconds = retryAfterSeconds(response.headers.get('retry-after'));
        if (seconds === null || seconds > maxWait) return response;
        waitMs = seconds * 1000;
      } else {
        const seconds = retryAfterSeconds(response.headers.get('retry-after'));
        waitMs = seconds !== null && seconds <= maxWait ? seconds * 1000 : backoff * 2 ** attempt;
      }
      await response.body?.cancel();
      await sleep(waitMs);
    }
  };
}

/** A typed client: `client.GET('/v1/track/{carrier}/{awb}', { params: { path: { carrier, awb } } })`. */
export function createTrackingClient(options: ClientOptions): TrackingClient {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'X-API-Key': options.apiKey },
    fetch: retryingFetch(base, options),
  });
}

/** A push delivery's body (contracts.md "Push"): the event type, when it happened, its data. */
export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export { WebhookVerificationError };

/**
 * Verifies a push delivery with the endpoint's secret (whsec_…): the webhook-id,
 * webhook-timestamp and webhook-signature headers over the raw body (Standard Webhooks v1, with
 * its 5-minute tolerance). Returns the parsed event; throws WebhookVerificationError otherwise.
 * During a rotation pass every secret still signing: any one that verifies is enough.
 */
export function verifyWebhook(secrets: string | string[], rawBody: string, headers: Record<string, string | string[] | undefined>): WebhookEvent {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  let failure: unknown;
  for (const secret of [secrets].flat()) {
    try {
      return new Webhook(secret).verify(rawBody, flat) as WebhookEvent;
    } catch (err) {
      failure = err;
    }
  }
  throw failure instanceof Error ? failure : new WebhookVerificationError('No secret given');
}
