/**
 * The HTTP transport to one carrier: keep-alive connections (undici), a per-attempt timeout, retries
 * with jittered exponential backoff for safe requests, a concurrency limit and a circuit breaker
 * (cockatiel), so a carrier that is down fails fast and recovers by itself.
 */
import {
  BrokenCircuitError,
  BulkheadRejectedError,
  ConsecutiveBreaker,
  ExponentialBackoff,
  TaskCancelledError,
  TimeoutStrategy,
  bulkhead,
  circuitBreaker,
  handleWhen,
  retry,
  timeout,
  wrap,
  type IPolicy,
} from 'cockatiel';
import { Agent, request, type Dispatcher } from 'undici';
import type { HttpRequest, HttpSend, NativeResponse } from './types.ts';

export interface HttpSendOptions {
  /** Carrier slug, for error messages. */
  name?: string;
  /** Per attempt, headers and body included. Default 5000 ms (the slow sandbox carrier takes 3 s). */
  timeoutMs?: number;
  /** Extra attempts for safe requests after a network error or a 502/503/504. Default 2. */
  retries?: number;
  /** First backoff delay; later ones grow exponentially with jitter. Default 100 ms. */
  retryBaseDelayMs?: number;
  /** Cap of one backoff delay. Default 2000 ms. */
  retryMaxDelayMs?: number;
  /** Requests in flight at once; the rest wait in a queue. Default 16. */
  maxConcurrent?: number;
  /** Requests allowed to wait; beyond it a call fails at once as overloaded. Default 1000. */
  maxQueued?: number;
  /** Consecutive failed attempts that open the breaker; `false` disables it. Default 5. */
  breakerThreshold?: number | false;
  /** How long an open breaker fails fast before one trial call is let through. Default 10000 ms. */
  breakerHalfOpenAfterMs?: number;
  /** Shared connection pool; when absent the transport owns one and closes it in `close()`. */
  dispatcher?: Dispatcher;
}

export type CarrierUnavailableReason = 'timeout' | 'network' | 'circuit_open' | 'overloaded';

/** The carrier could not be asked or did not answer: no carrier answer exists to parse. */
export class CarrierUnavailableError extends Error {
  readonly reason: CarrierUnavailableReason;
  constructor(reason: CarrierUnavailableReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
    this.name = 'CarrierUnavailableError';
  }
}

/** A transport that can be shut down (closes the connection pool it owns). */
export type ClosableHttpSend = HttpSend & { close(): Promise<void> };

const RETRYABLE_STATUS: ReadonlySet<number> = new Set([502, 503, 504]);

/** A 502/503/504 answer, thrown inside the policies so retry and breaker see it, returned at the end. */
class RetryableStatus extends Error {
  readonly response: NativeResponse;
  constructor(response: NativeResponse) {
    super(`HTTP ${response.status}`);
    this.response = response;
  }
}

const isSafe = (req: HttpRequest) => req.method === 'GET' || req.idempotent === true;

/** undici error codes that describe the request, not the network: repeating them cannot help. */
const REQUEST_ERROR_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'UND_ERR_INVALID_RETURN_VALUE', 'UND_ERR_ABORTED',
]);

/** Connection refused / reset, socket closed, DNS failure...: errors with a system or undici code. */
function isNetworkError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !REQUEST_ERROR_CODES.has(code);
}

/** Worth another attempt: the carrier or the network failed, not the request. */
const isTransient = (error: Error) => error instanceof RetryableStatus || isNetworkError(error);

/** Failures the breaker counts: also timeouts, since a carrier that hangs is as down as one that refuses. */
const isCarrierFailure = (error: Error) => isTransient(error) || error instanceof TaskCancelledError;

function headersOf(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${typeof code === 'string' ? `${code} ` : ''}${error.message}${cause}`;
}

export function createHttpSend(options: HttpSendOptions = {}): ClosableHttpSend {
  const name = options.name ?? 'carrier';
  const timeoutMs = options.timeoutMs ?? 5_000;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, connections: options.maxConcurrent ?? 16 });

  const limit = bulkhead(options.maxConcurrent ?? 16, options.maxQueued ?? 1_000);
  const perAttempt = timeout(timeoutMs, TimeoutStrategy.Aggressive);
  const threshold = options.breakerThreshold ?? 5;
  const guarded: IPolicy = threshold === false
    ? perAttempt
    : wrap(
      circuitBreaker(handleWhen(isCarrierFailure), {
        halfOpenAfter: options.breakerHalfOpenAfterMs ?? 10_000,
        breaker: new ConsecutiveBreaker(threshold),
      }),
      perAttempt,
    );
  const retrying = retry(handleWhen(isTransient), {
    maxAttempts: options.retries ?? 2,
    backoff: new ExponentialBackoff({ initialDelay: options.retryBaseDelayMs ?? 100, maxDelay: options.retryMaxDelayMs ?? 2_000 }),
  });
  const safePolicy = wrap(limit, retrying, guarded);
  const unsafePolicy = wrap(limit, guarded);

  async function attempt(req: HttpRequest, signal: AbortSignal): Promise<NativeResponse> {
    const res = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      dispatcher,
      signal,
    });
    const response: NativeResponse = { status: res.statusCode, headers: headersOf(res.headers), body: await res.body.text() };
    if (RETRYABLE_STATUS.has(response.status)) throw new RetryableStatus(response);
    return response;
  }

  const send = async (req: HttpRequest): Promise<NativeResponse> => {
    const policy = isSafe(req) ? safePolicy : unsafePolicy;
    try {
      // A signal per request: cockatiel's shared default signal would collect one abort listener
      // per request in flight (Node warns past 10).
      return await policy.execute(({ signal }) => attempt(req, signal), new AbortController().signal);
    } catch (error) {
      if (error instanceof RetryableStatus) return error.response;
      if (error instanceof TaskCancelledError) {
        throw new CarrierUnavailableError('timeout', `${name}: no answer within ${timeoutMs} ms`, { cause: error });
      }
      if (error instanceof BrokenCircuitError) {
        throw new CarrierUnavailableError('circuit_open', `${name}: circuit open after repeated failures`, { cause: error });
      }
      if (error instanceof BulkheadRejectedError) {
        throw new CarrierUnavailableError('overloaded', `${name}: too many requests waiting`, { cause: error });
      }
      throw new CarrierUnavailableError('network', `${name}: ${describe(error)}`, { cause: error });
    }
  };
  return Object.assign(send, {
    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  });
}
