import type { ClickHouseClient, ClickHouseClientConfigOptions } from '@clickhouse/client';
import { lazyModule } from '../lazy/lazy-module.ts';
import { recordingWhenAsked } from './statement-recorder.ts';
import { sqlIdentifier } from './sql.ts';

/** @clickhouse/client, loaded at the first client (lib/lazy/lazy-module.ts says why). */
const clickhouseClientLibrary = lazyModule<typeof import('@clickhouse/client')>('@clickhouse/client');

export type { ClickHouseClient };

/** contracts.md: the pipeline's tables live in database `tracking`. */
export const DEFAULT_DATABASE = 'tracking';
export const DEFAULT_CLICKHOUSE_URL = 'http://127.0.0.1:8123';

/** Where the pipeline's tables are: server URL (no path) and database name. */
export interface ClickHouseTarget {
  url: string;
  database: string;
}

/**
 * Resolves CLICKHOUSE_URL (default http://127.0.0.1:8123) and the database: an explicit name wins,
 * then a path in the URL (`http://host:8123/tracking`), then `tracking`. The name is validated as
 * an identifier because it reaches SQL text (CREATE DATABASE).
 */
export function resolveTarget(url: string = DEFAULT_CLICKHOUSE_URL, database?: string): ClickHouseTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`CLICKHOUSE_URL is not a URL: ${JSON.stringify(url)}`);
  }
  const fromPath = decodeURIComponent(parsed.pathname.replace(/^\/+|\/+$/g, ''));
  const name = database ?? (fromPath || DEFAULT_DATABASE);
  sqlIdentifier(name);
  parsed.pathname = '/';
  return { url: parsed.toString().replace(/\/$/, ''), database: name };
}

/**
 * A client bound to `database` (unqualified table names resolve there). The client's own console
 * logging is off: callers report failures themselves, and the writer retries transient ones.
 */
export function createClickHouseClient(
  target: ClickHouseTarget | { url: string; database?: string },
  options: Omit<ClickHouseClientConfigOptions, 'url' | 'database'> = {},
): ClickHouseClient {
  const library = clickhouseClientLibrary();
  const client = library.createClient({
    request_timeout: 30_000,
    log: { level: library.ClickHouseLogLevel.OFF },
    // A kept-alive socket the server has already closed fails its next request ("socket hang up").
    // Servers before 23.11 close idle sockets after 3 s, and the client's default of 2.5 s left
    // half a second, which a busy event loop overran (a normalizer's first batch failed so in a
    // loaded test run): idle sockets go after 1.5 s, and stale ones are dropped before reuse.
    keep_alive: { idle_socket_ttl: 1_500, eagerly_destroy_stale_sockets: true },
    ...options,
    url: target.url,
    database: target.database ?? 'default',
  });
  // Tests only (scripts/test.sh sets CLICKHOUSE_RECORD_SQL): every statement sent is noted for the
  // current-engine check (test/clickhouse-current.test.ts).
  return recordingWhenAsked(client);
}

/** Code and readable message of a ClickHouse failure (18.16 and current servers word errors differently). */
export interface ClickHouseErrorInfo {
  /** ClickHouse's numeric error code, null for transport errors (refused, reset, timeout). */
  code: number | null;
  message: string;
}

export function clickHouseErrorInfo(err: unknown): ClickHouseErrorInfo {
  const error = err instanceof Error ? err : new Error(String(err));
  const raw = error.message.trim();
  // Current servers: "Code: 60. DB::Exception: Table x doesn't exist. (UNKNOWN_TABLE) (version ...)",
  // parsed by the client into ClickHouseError { code: '60' }. 18.16: "Code: 60, e.displayText() =
  // DB::Exception: Table x doesn't exist, e.what() = DB::Exception", left as a plain Error.
  const typed = (error as { code?: unknown }).code;
  const fromMessage = /^Code: (\d+)/.exec(raw)?.[1];
  const numeric = typeof typed === 'string' && /^\d+$/.test(typed) ? Number(typed) : fromMessage ? Number(fromMessage) : null;
  const message = raw
    .replace(/^Code: \d+[.,]\s*(e\.displayText\(\) = )?(DB::Exception: )?/, '')
    .replace(/,\s*e\.what\(\) = DB::Exception$/, '')
    .trim();
  return { code: numeric, message: message || raw };
}

/** ClickHouse error codes worth retrying: overload, timeouts, network and replica trouble. */
const RETRYABLE_CODES = new Set([
  3, // UNEXPECTED_END_OF_FILE (connection cut mid-request)
  159, // TIMEOUT_EXCEEDED
  164, // READONLY (a replica restarting)
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  203, // NO_FREE_CONNECTION
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  241, // MEMORY_LIMIT_EXCEEDED
  242, // TABLE_IS_READ_ONLY
  252, // TOO_MANY_PARTS
  285, // TOO_FEW_LIVE_REPLICAS
  319, // UNKNOWN_STATUS_OF_INSERT
  425, // SYSTEM_ERROR
  999, // KEEPER_EXCEPTION
]);
const RETRYABLE_TRANSPORT = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET',
]);

/** True for failures a later attempt can succeed at; false for bad SQL, bad data, missing tables. */
export function isRetryableClickHouseError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { code } = clickHouseErrorInfo(err);
  if (code !== null) return RETRYABLE_CODES.has(code);
  const transport = (err as { code?: unknown }).code;
  if (typeof transport === 'string' && RETRYABLE_TRANSPORT.has(transport)) return true;
  return /socket hang up|timeout|ECONNRESET|ECONNREFUSED|other side closed/i.test(err.message);
}

/** Health check: true when the server answers /ping. Never throws. */
export async function pingClickHouse(client: ClickHouseClient): Promise<boolean> {
  try {
    return (await client.ping()).success;
  } catch {
    return false;
  }
}
