/**
 * One webhook attempt over HTTP: POST a signed body to an endpoint and say what happened. The
 * dispatcher decides about retries; this module only sends, and never throws.
 *
 * - One undici Pool per endpoint id, bounded to `connectionsPerEndpoint` sockets: a slow or dead
 *   endpoint queues its own requests and never holds another endpoint's connections.
 * - The URL rules (url-policy.ts) are applied at every attempt, after resolving the host: a host
 *   that now resolves to a private address is refused at this attempt, without connecting.
 * - The socket connects only to the addresses that check returned (the pool's connect `lookup`
 *   hands them to net/tls instead of asking DNS again), so a DNS answer that changes between check
 *   and connect (rebinding) cannot reach an address that was never checked. TLS still verifies the
 *   certificate against the host name (SNI and the Host header are the URL's name).
 * - Redirects are never followed (undici's Pool has no redirect handling; a 3xx is a failure).
 * - One deadline (default 15 s) covers resolution, connection, headers and body; the answer's body
 *   is read and discarded up to 64 KiB, beyond which the connection is dropped.
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { NO_PRIVATE_TARGETS, checkEndpointUrl, isPrivateTarget, resolveEndpointHost, systemLookup, type AllowedTargets, type Lookup } from './url-policy.ts';
import type { KeyMode } from '../schemas/index.ts';

export interface DeliveryRequest {
  endpointId: string;
  url: string;
  mode: KeyMode;
  /** The signature headers (signing.ts) and any others; content-type and user-agent are set here. */
  headers: Record<string, string>;
  body: string;
}

export interface DeliveryOutcome {
  /** The endpoint's HTTP status; null when there was no HTTP answer (refused, DNS, connect, timeout). */
  statusCode: number | null;
  /** Whole attempt: resolution, connection, request, headers and the discarded body. */
  latencyMs: number;
  /** Short human text; null on a 2xx. */
  error: string | null;
  /**
   * From a Retry-After header (delay seconds or HTTP-date) on a non-2xx answer, as sent: capping it
   * (the contract honours at most 1 h) is the dispatcher's rule.
   */
  retryAfterSeconds: number | null;
  /**
   * The target was reached only because the operator opened it (WEBHOOK_ALLOWED_TARGETS): what it
   * answered must not be shown to the key (see `keyVisibleError`).
   */
  privateTarget?: boolean;
}

/**
 * The error text a key's delivery log shows. For a private target only the bare outcome: its
 * redirect target or connection errors would let a key map the network the dispatcher runs in.
 */
export function keyVisibleError(outcome: DeliveryOutcome): string | null {
  if (!outcome.privateTarget || outcome.error === null) return outcome.error;
  return outcome.statusCode === null ? 'no answer from the target' : `HTTP ${outcome.statusCode}`;
}

export interface WebhookSenderOptions {
  /** Deadline of one attempt, headers and body included. Default 15000 ms (the contract's). */
  timeoutMs?: number;
  /** Sockets per endpoint; requests beyond wait in that endpoint's queue. Default 8. */
  connectionsPerEndpoint?: number;
  /** Resolver of host names to all their addresses (tests); default the system resolver. */
  lookup?: Lookup;
  /** A pool unused this long (and with nothing in flight) is closed. Default 5 minutes. */
  idlePoolMs?: number;
  /** Trusted CA certificates (PEM) instead of Node's bundled roots: tests with a local https receiver. */
  ca?: string | string[];
  /** Non-public addresses the operator opened (WEBHOOK_ALLOWED_TARGETS); default none. */
  allowedTargets?: AllowedTargets;
}

export const WEBHOOK_USER_AGENT = 'india-tracking-webhooks/1 (+Standard Webhooks v1)';

/** Bytes of an answer's body read before the connection is dropped instead. */
const MAX_DISCARDED_BODY = 64 * 1024;
/** Longest Location echoed in an error text. */
const MAX_LOCATION_IN_ERROR = 200;

/** The reason a deadline aborted an attempt, told apart from other aborts. */
class AttemptTimeout extends Error {}

/** Raised by the connect lookup if it has no checked addresses: never connect to unchecked ones. */
class UncheckedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_UNCHECKED_ADDRESS';
}

interface EndpointPool {
  pool: Pool;
  origin: string;
  mode: KeyMode;
  /** The addresses the latest attempt's check allowed; what new connections go to. */
  checked: string[] | null;
  inFlight: number;
  lastUsedAt: number;
}

function familyOf(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}

/**
 * A net/tls `lookup` that answers with the endpoint's checked addresses and never asks DNS. With
 * autoSelectFamily (Node's default) net asks for all of them and tries each in turn.
 */
function checkedLookup(entry: EndpointPool): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : null;
    const addresses: LookupAddress[] = (entry.checked ?? [])
      .map((address) => ({ address, family: familyOf(address) }))
      .filter((a) => family === null || a.family === family);
    if (addresses.length === 0) {
      callback(new UncheckedAddressError(`refused: no checked address for ${hostname}`), '', 4);
    } else if (options.all === true) {
      callback(null, addresses);
    } else {
      callback(null, addresses[0]!.address, addresses[0]!.family);
    }
  };
}

/** Seconds from a Retry-After value: delay-seconds, or an HTTP-date (which starts with a day name). */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | null {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (raw === undefined || raw === '') return null;
  if (/^\d+$/.test(raw)) return Math.min(Number(raw), Number.MAX_SAFE_INTEGER);
  if (!/^[A-Za-z]{3}/.test(raw)) return null;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** A short text for an attempt that got no HTTP answer. */
function describeFailure(error: unknown, timeoutMs: number, signal: AbortSignal): string {
  if (signal.aborted && signal.reason instanceof AttemptTimeout) return `timeout after ${timeoutMs} ms`;
  if (error instanceof UncheckedAddressError) return error.message;
  if (!(error instanceof Error)) return String(error).slice(0, 200);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? error.cause : null;
  const codeOf = (e: Error | null) => (e === null ? undefined : (e as { code?: unknown }).code);
  switch (typeof code === 'string' ? code : codeOf(cause)) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': case 'UND_ERR_SOCKET': case 'EPIPE': return 'connection closed by the endpoint';
    case 'UND_ERR_CONNECT_TIMEOUT': return 'connect timeout';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'endpoint unreachable';
    case 'UND_ERR_HEADERS_OVERFLOW': return 'response headers too large';
    default: break;
  }
  // TLS failures (expired or self-signed certificate, wrong name...) carry OpenSSL-ish codes.
  if (typeof code === 'string' && (/CERT|TLS|SSL/.test(code))) return `TLS: ${error.message}`.slice(0, 200);
  return `${typeof code === 'string' ? `${code} ` : ''}${error.message}`.slice(0, 200);
}

/** Rejects with the signal's reason once it aborts; for steps that cannot be cancelled (DNS). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export class WebhookSender {
  private readonly timeoutMs: number;
  private readonly connectionsPerEndpoint: number;
  private readonly lookup: Lookup;
  private readonly idlePoolMs: number;
  private readonly ca: string | string[] | undefined;
  private readonly allowedTargets: AllowedTargets;
  private readonly pools = new Map<string, EndpointPool>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(options: WebhookSenderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.connectionsPerEndpoint = options.connectionsPerEndpoint ?? 8;
    this.lookup = options.lookup ?? systemLookup;
    this.idlePoolMs = options.idlePoolMs ?? 5 * 60_000;
    this.ca = options.ca;
    this.allowedTargets = options.allowedTargets ?? NO_PRIVATE_TARGETS;
    this.sweeper = setInterval(() => this.closeIdlePools(), Math.min(this.idlePoolMs, 60_000));
    this.sweeper.unref();
  }

  async send(request: DeliveryRequest): Promise<DeliveryOutcome> {
    const started = performance.now();
    let privateTarget = false;
    const done = (statusCode: number | null, error: string | null, retryAfterSeconds: number | null = null): DeliveryOutcome =>
      ({ statusCode, latencyMs: Math.round(performance.now() - started), error, retryAfterSeconds, privateTarget });
    if (this.closed) return done(null, 'sender closed');

    const syntax = checkEndpointUrl(request.url, request.mode, this.allowedTargets);
    if (!syntax.ok) return done(null, `refused: ${syntax.reason}`);

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeout()), this.timeoutMs);
    let entry: EndpointPool | undefined;
    try {
      const resolved = await raceAbort(resolveEndpointHost(syntax.url, request.mode, this.allowedTargets, this.lookup), controller.signal);
      if (!resolved.ok) return done(null, resolved.reason);
      privateTarget = isPrivateTarget(resolved.addresses);
      const url = new URL(syntax.url);
      entry = this.poolFor(request.endpointId, url.origin, request.mode);
      entry.checked = resolved.addresses;
      entry.inFlight++;
      const response = await entry.pool.request({
        method: 'POST',
        path: `${url.pathname}${url.search}`,
        headers: { ...request.headers, 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT },
        body: request.body,
        signal: controller.signal,
      });
      await response.body.dump({ limit: MAX_DISCARDED_BODY, signal: controller.signal });
      const status = response.statusCode;
      if (status >= 200 && status < 300) return done(status, null);
      const retryAfter = parseRetryAfter(response.headers['retry-after']);
      if (status >= 300 && status < 400) {
        const location = response.headers.location;
        const target = (Array.isArray(location) ? location[0] : location)?.slice(0, MAX_LOCATION_IN_ERROR);
        return done(status, `redirect not followed (${status}${target ? ` to ${target}` : ''})`, retryAfter);
      }
      return done(status, `HTTP ${status}`, retryAfter);
    } catch (error) {
      return done(null, describeFailure(error, this.timeoutMs, controller.signal));
    } finally {
      clearTimeout(timer);
      if (entry !== undefined) {
        entry.inFlight--;
        entry.lastUsedAt = Date.now();
      }
    }
  }

  /** Closes every pool (waiting for requests in flight, each bounded by the deadline). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const pools = [...this.pools.values()].map((entry) => entry.pool);
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  /** Endpoints with a pool now (for tests and metrics). */
  get poolCount(): number {
    return this.pools.size;
  }

  /** The endpoint's pool; a new one when the endpoint's origin or mode changed since. */
  private poolFor(endpointId: string, origin: string, mode: KeyMode): EndpointPool {
    const existing = this.pools.get(endpointId);
    if (existing !== undefined && existing.origin === origin && existing.mode === mode) return existing;
    if (existing !== undefined) void existing.pool.close().catch(() => undefined);
    const entry: EndpointPool = { pool: undefined as unknown as Pool, origin, mode, checked: null, inFlight: 0, lastUsedAt: Date.now() };
    entry.pool = new Pool(origin, {
      connections: this.connectionsPerEndpoint,
      pipelining: 1,
      // The attempt's own deadline governs; these only must not cut it shorter.
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      keepAliveTimeout: 10_000,
      connect: {
        lookup: checkedLookup(entry),
        autoSelectFamily: true,
        timeout: this.timeoutMs,
        ...(this.ca === undefined ? {} : { ca: this.ca }),
      },
    });
    this.pools.set(endpointId, entry);
    return entry;
  }

  private closeIdlePools(): void {
    const now = Date.now();
    for (const [endpointId, entry] of this.pools) {
      if (entry.inFlight === 0 && now - entry.lastUsedAt >= this.idlePoolMs) {
        this.pools.delete(endpointId);
        void entry.pool.close().catch(() => undefined);
      }
    }
  }
}
