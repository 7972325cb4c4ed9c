/**
 * Outbound webhook HTTP through undici: one bounded connection pool per endpoint, so a slow or dead
 * endpoint only ever holds its own connections; no redirects; a 15 s limit on the whole attempt;
 * the host checked against the URL rules at every attempt and again at connect time (the lookup the
 * socket uses), so a name that starts resolving to a private address is refused at that attempt.
 */
import type { LookupAddress } from 'node:dns';
import { Agent, request } from 'undici';
import { resolveEndpointHost, type EndpointMode, type HostLookup } from './url-policy.ts';

export interface DeliveryRequest {
  endpointId: string;
  url: string;
  mode: EndpointMode;
  headers: Record<string, string>;
  body: string;
}

export interface DeliveryOutcome {
  /** Null when no HTTP answer came (refused, unresolvable, connect error, timeout). */
  statusCode: number | null;
  latencyMs: number;
  /** Null on a 2xx. */
  error: string | null;
  /** The receiver's Retry-After on a non-2xx answer, in seconds. */
  retryAfterSeconds: number | null;
}

export interface WebhookSenderOptions {
  /** Whole attempt, headers and body (default 15,000 ms). */
  timeoutMs?: number;
  /** Connections per endpoint (default 8). */
  connectionsPerEndpoint?: number;
  /** Name resolution (tests); default the system resolver. */
  lookup?: HostLookup;
}

const USER_AGENT = 'india-tracking-webhooks/1.0 (+https://standardwebhooks.com)';
/** Pools unused this long are closed. */
const IDLE_POOL_MS = 5 * 60_000;

export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

export class WebhookSender {
  private readonly pools = new Map<string, { agent: Agent; mode: EndpointMode; usedMs: number }>();
  private readonly timeoutMs: number;
  private readonly connections: number;
  private readonly lookup: HostLookup | undefined;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: WebhookSenderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.connections = options.connectionsPerEndpoint ?? 8;
    this.lookup = options.lookup;
    this.sweeper = setInterval(() => this.closeIdle(), IDLE_POOL_MS);
    this.sweeper.unref();
  }

  private agentFor(endpointId: string, mode: EndpointMode): Agent {
    const known = this.pools.get(endpointId);
    if (known && known.mode === mode) {
      known.usedMs = Date.now();
      return known.agent;
    }
    // The socket's own lookup applies the rules too: between our check and the connect, a name
    // could be made to resolve elsewhere (DNS rebinding).
    const connectLookup = (hostname: string, options: { all?: boolean }, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
      resolveEndpointHost(`http://${hostname.includes(':') ? `[${hostname}]` : hostname}/`, mode, this.lookup).then((checked) => {
        if (!checked.ok) return callback(Object.assign(new Error(checked.reason), { code: 'EREFUSEDADDRESS' }), '', 4);
        const entries = checked.addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
        if (options.all) callback(null, entries);
        else callback(null, entries[0]!.address, entries[0]!.family);
      }, (err: Error) => callback(err, '', 4));
    };
    const agent = new Agent({ connections: this.connections, connect: { lookup: connectLookup } as never, keepAliveTimeout: 30_000 });
    this.pools.set(endpointId, { agent, mode, usedMs: Date.now() });
    return agent;
  }

  /** One attempt; never throws. */
  async send(req: DeliveryRequest): Promise<DeliveryOutcome> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const checked = await resolveEndpointHost(req.url, req.mode, this.lookup);
    if (!checked.ok) return { statusCode: null, latencyMs: elapsed(), error: checked.reason, retryAfterSeconds: null };
    try {
      const response = await request(req.url, {
        method: 'POST',
        dispatcher: this.agentFor(req.endpointId, req.mode),
        headers: { ...req.headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body: req.body,
        signal: AbortSignal.timeout(this.timeoutMs),
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
      // Read (and drop) the answer so the connection can be reused.
      await response.body.dump({ limit: 64 * 1024 });
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { statusCode: status, latencyMs: elapsed(), error: null, retryAfterSeconds: null };
      const location = response.headers.location;
      const error = status >= 300 && status < 400 ? `redirect not followed (${status}${location ? ` to ${String(location)}` : ''})` : `HTTP ${status}`;
      return { statusCode: status, latencyMs: elapsed(), error, retryAfterSeconds: parseRetryAfter(response.headers['retry-after'], Date.now()) };
    } catch (err) {
      const e = err as Error & { code?: string; cause?: Error & { code?: string } };
      const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
      const reason = timedOut ? `timeout after ${this.timeoutMs} ms` : (e.cause?.message ?? e.message) || e.code || 'connection failed';
      return { statusCode: null, latencyMs: elapsed(), error: reason, retryAfterSeconds: null };
    }
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [id, pool] of this.pools) {
      if (now - pool.usedMs > IDLE_POOL_MS) {
        this.pools.delete(id);
        void pool.agent.close().catch(() => {});
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.pools.values()].map((p) => p.agent.close().catch(() => {})));
    this.pools.clear();
  }
}
