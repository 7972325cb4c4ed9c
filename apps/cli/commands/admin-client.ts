/** A small client of the admin HTTP API (contracts.md "Admin API"); the CLI never opens a store. */
import { request } from 'undici';

/** The API answered with an error (or could not be reached): exit code 1. */
export class AdminApiError extends Error {
  override name = 'AdminApiError';
  readonly status: number | null;
  readonly code: string | null;
  constructor(message: string, status: number | null, code: string | null) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** One admin call; `body` is sent as JSON when present. */
export interface AdminRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

export interface AdminClient {
  /** The answer's JSON; throws AdminApiError for an error answer or when the API is unreachable. */
  call(req: AdminRequest): Promise<unknown>;
}

const TIMEOUT_MS = 30_000;

function errorMessage(status: number, payload: unknown): AdminApiError {
  const error = (payload as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error.message === 'string') {
    return new AdminApiError(error.message, status, typeof error.code === 'string' ? error.code : null);
  }
  return new AdminApiError(`The admin API answered HTTP ${status} without an error message.`, status, null);
}

export function createAdminClient(baseUrl: string, token: string): AdminClient {
  const base = baseUrl.replace(/\/+$/, '');

  async function call({ method, path, body }: AdminRequest): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    // Fastify refuses an empty body declared as JSON, so bodiless calls declare none.
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      response = await request(`${base}${path}`, {
        method, headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
      });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      throw new AdminApiError(`Cannot reach the admin API at ${base}: ${e.code ?? e.message ?? String(err)}.`, null, null);
    }
    const text = await response.body.text();
    let payload: unknown;
    try {
      payload = text ? JSON.parse(text) : null;
    } catch {
      payload = null; // not JSON (a proxy's error page, say): reported by status below
    }
    if (response.statusCode >= 400) throw errorMessage(response.statusCode, payload);
    if (payload === null) throw new AdminApiError(`The admin API answered HTTP ${response.statusCode} without a JSON body.`, response.statusCode, null);
    return payload;
  }

  return { call };
}

/** A path segment from user input, so a prefix can never change the route. */
export function keyPath(prefix: string, action?: string): string {
  return `/admin/keys/${encodeURIComponent(prefix)}${action ? `/${action}` : ''}`;
}
