/**
 * What the API does with hostile or malformed HTTP: the limits and timeouts of the server, chosen on
 * purpose, and one answer for everything refused, including what never reaches a route (Node's
 * parser errors, Fastify's URL errors): the standard error body, an `X-Request-Id`, a log line.
 * docs/operators/limits.md says why each value is what it is.
 */
import { METHODS, STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyHttpOptions, FastifyRequest } from 'fastify';
import { AWB_RULE, type ErrorCode } from '../../../lib/schemas/index.ts';
import { ApiError, CODE_TO_STATUS, errorBody, sendError } from './errors.ts';

export interface ServerLimits {
  /** Largest request body, any route (JSON and the trial form are a few hundred bytes). */
  bodyLimit: number;
  /** Request line plus headers. */
  maxHeaderSize: number;
  /** Header fields per request; more → 431. */
  maxHeaders: number;
  /** Time to receive the whole header block (slow-loris guard). */
  headersTimeoutMs: number;
  /** Time to receive the whole request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** How often Node checks the two timeouts above: their precision. */
  timeoutCheckIntervalMs: number;
}

export const SERVER_LIMITS: ServerLimits = {
  bodyLimit: 64 * 1024,
  maxHeaderSize: 16 * 1024,
  maxHeaders: 100,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  timeoutCheckIntervalMs: 1_000,
};

/**
 * Security headers: every answer is `nosniff` (a JSON error echoing input must never be sniffed as
 * HTML); HTML pages (/trial, /docs) may load only their own scripts and styles, post forms only
 * here, and never be framed (the trial page shows a key: no clickjacking). Inline styles are allowed
 * because both pages use them (the trial page's <style>, Swagger UI's style attributes); scripts
 * are never inline.
 */
const HTML_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

function securityHeaders(reply: FastifyReply): void {
  reply.header('X-Content-Type-Options', 'nosniff');
  const type = reply.getHeader('content-type');
  if (typeof type === 'string' && type.startsWith('text/html')) reply.headers(HTML_HEADERS);
}

/** The error of a path Fastify could not route: which part of a lookup was bad, when it is one. */
function badPathError(url: string, what: string): ApiError {
  const [path] = url.split('?');
  const track = /^\/v1\/track\/([^/]*)\/([^/]*)$/.exec(path ?? '');
  if (track) {
    const carrierBad = !decodes(track[1]!) || track[1]!.length > 100;
    if (carrierBad) {
      return new ApiError('unsupported_carrier', `The carrier in the path is not a supported carrier (${what}). See /openapi.json for the list of carriers.`);
    }
    return new ApiError('invalid_awb', `The consignment number must be ${AWB_RULE} (${what}).`);
  }
  return new ApiError('bad_request', `The request path is not valid: ${what}.`);
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/** Fastify's `frameworkErrors`: errors raised before routing (no onRequest hook has run). */
function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', request.id);
  const apiError = error.code === 'FST_ERR_BAD_URL'
    ? badPathError(request.raw.url ?? '', 'bad percent-encoding')
    : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? badPathError(request.raw.url ?? '', 'a path segment is too long')
      : new ApiError('bad_request', 'The request could not be routed.');
  request.log.info({ req: request, err: { code: error.code }, status: apiError.status }, 'request refused before routing');
  securityHeaders(reply.type('application/json; charset=utf-8'));
  sendError(reply, request, apiError);
}

/** Node parser errors and timeouts: the status and code of the answer. */
function clientErrorOf(code: string | undefined, limits: ServerLimits): { code: ErrorCode; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { code: 'header_fields_too_large', message: `The request line and headers exceed ${limits.maxHeaderSize / 1024} KiB.` };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'request_timeout', message: 'The request did not arrive in time.' };
  return { code: 'bad_request', message: `Malformed HTTP request (${code ?? 'parse error'}).` };
}

/**
 * Fastify's `clientErrorHandler`: Node's parser refused the bytes (bad characters in the path or a
 * header, Content-Length with chunked encoding, headers too large, a timeout) before any request
 * object exists. Answers on the raw socket in the standard body, then closes the connection: the
 * stream can no longer be trusted to be framed correctly.
 */
function clientErrorHandler(log: () => FastifyBaseLogger, nextId: () => string, limits: ServerLimits) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const id = nextId();
    const { code, message } = clientErrorOf(err.code, limits);
    const status = CODE_TO_STATUS[code];
    log().info({ reqId: id, err: { code: err.code, message: err.message }, status, remoteAddress: socket.remoteAddress }, 'client error');
    // A response already under way on this connection cannot be followed by another one.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const body = JSON.stringify(errorBody(code, message, id));
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n`
        + `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nX-Content-Type-Options: nosniff\r\n`
        + `Connection: close\r\n\r\n${body}`,
      );
    } else {
      socket.destroy();
    }
  };
}

/** The Fastify options of the limits above (passed to `Fastify()` with the app's own). */
export function serverOptions(nextId: () => string, log: () => FastifyBaseLogger, limits: ServerLimits = SERVER_LIMITS): FastifyHttpOptions<Server> {
  return {
    bodyLimit: limits.bodyLimit,
    // At least the header limit, so no path parameter is ever cut by the router: the route's own
    // validation answers (400 invalid_awb, ...) in the order the contract gives.
    routerOptions: { maxParamLength: limits.maxHeaderSize },
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      maxHeaderSize: limits.maxHeaderSize,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
      // Node would answer a missing Host itself, in its own body; the hook below does it in ours.
      requireHostHeader: false,
    },
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(log, nextId, limits),
  };
}

/**
 * Hooks of the hardening: the checks Node no longer makes itself (Host, header count), the
 * security headers of every answer, and every method Node's parser accepts made routable, so a
 * wrong one on an existing path is 405 (errors.ts methodNotAllowed), not 404.
 */
export function registerHardening(app: FastifyInstance, limits: ServerLimits = SERVER_LIMITS): void {
  // Node keeps one more header than allowed, so the hook below can tell "too many" from "enough".
  app.server.maxHeadersCount = limits.maxHeaders + 1;
  for (const method of METHODS) {
    // CONNECT never reaches a request handler (Node emits 'connect' instead).
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  app.addHook('onRequest', async (request) => {
    const raw = request.raw;
    if (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1 && !raw.headers.host) {
      throw new ApiError('bad_request', 'HTTP/1.1 requests need a Host header.');
    }
    if (raw.rawHeaders.length / 2 > limits.maxHeaders) {
      throw new ApiError('header_fields_too_large', `More than ${limits.maxHeaders} header fields.`);
    }
  });
  // A callback hook, not an async one: no promise per answer on the hottest path.
  app.addHook('onSend', (_request, reply, payload, done) => {
    securityHeaders(reply);
    done(null, payload);
  });
}
