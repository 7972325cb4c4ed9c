/**
 * Hostile input (issue 13), over real HTTP: the API listening on a loopback port, requests written
 * byte for byte on raw sockets (node:net), since several cases never reach Fastify's router (Node's
 * parser refuses them first). Every answer must carry the standard error body and an X-Request-Id,
 * and be logged. The cases that touch the store (a period that starts later, the trial limit
 * surviving a restart) run on both stores.
 * hostile.test.ts runs it on the embedded default, hostile.services.test.ts the store cases on Redis.
 */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ErrorBodySchema, type ErrorCode } from '../../../lib/schemas/index.ts';
import { SERVER_LIMITS } from '../http/hardening.ts';
import { ADMIN_TOKEN, DAY_MS, HOUR_MS, awbFor, startApiHarness, type ApiHarness, type StoreKind } from './harness.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` on a new connection and reads the answer until the server closes it. */
function rawRequest(base: string, request: string | Buffer): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (err) {
        reject(err as Error);
      }
    });
    socket.write(request);
  });
}

function parseResponse(bytes: Buffer): RawResponse {
  const text = bytes.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no complete HTTP answer: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = '';
    for (let rest = body; ;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = parseInt(rest.slice(0, lineEnd), 16);
      if (!size) break;
      decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
    body = decoded;
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

/** An HTTP/1.1 request closing the connection after the answer; `extra` are raw header lines. */
function http11(method: string, path: string, extra: string[] = [], body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close', ...extra];
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** The standard error body with this status and code, and an X-Request-Id equal to its request_id. */
function expectStandardError(res: RawResponse, status: number, code: ErrorCode): { message: string; request_id: string } {
  expect({ status: res.status, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  const parsed = ErrorBodySchema.safeParse(JSON.parse(res.body));
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  const error = parsed.data!.error;
  expect(error.code).toBe(code);
  expect(error.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers['x-request-id']).toBe(error.request_id);
  return error;
}

function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

export function hostileInputSuite(): void {
describe('hostile input over real HTTP (embedded default)', () => {
  const log = logSink();
  let h: ApiHarness;
  let base: string;
  let key: string;

  beforeAll(async () => {
    h = await startApiHarness({ logLevel: 'info', deps: (deps) => ({ ...deps, logStream: log.stream }) });
    base = await h.listen();
    key = (await h.createKey({ burst_per_second: 1000 })).key;
  });
  afterAll(() => h.close());

  const loggedWith = (requestId: string) => log.lines.filter((line) => line.includes(requestId));

  describe('1. every answer has the standard body and a request id, and is logged', () => {
    const long = 'A'.repeat(150);
    type Case = [name: string, request: () => string | Buffer, status: number, code: ErrorCode];
    it.each<Case>([
      ['an AWB segment over 100 characters', () => http11('GET', `/v1/track/delhivery/${long}`, [`X-API-Key: ${key}`]), 400, 'invalid_awb'],
      ['a carrier segment over 100 characters', () => http11('GET', `/v1/track/${'x'.repeat(150)}/${awbFor('delhivery', 2)}`, [`X-API-Key: ${key}`]), 400, 'unsupported_carrier'],
      ['bad percent-encoding in the AWB', () => http11('GET', '/v1/track/delhivery/%zz12345', [`X-API-Key: ${key}`]), 400, 'invalid_awb'],
      ['bad percent-encoding in the carrier', () => http11('GET', '/v1/track/del%zzhivery/123456789012', [`X-API-Key: ${key}`]), 400, 'unsupported_carrier'],
      ['bad percent-encoding elsewhere', () => http11('GET', '/admin/keys/%zz', [`Authorization: Bearer ${ADMIN_TOKEN}`]), 400, 'bad_request'],
      ['raw UTF-8 in the path', () => Buffer.from(http11('GET', '/v1/track/delhivery/टेस्ट123', [`X-API-Key: ${key}`]), 'utf8'), 400, 'bad_request'],
      ['a control character in a header', () => http11('GET', '/v1/usage', [`X-API-Key: ${key}`, 'X-Note: a\u0001b']), 400, 'bad_request'],
      ['Content-Length with chunked encoding', () => http11('POST', '/admin/keys', [`Authorization: Bearer ${ADMIN_TOKEN}`, 'Content-Type: application/json', 'Content-Length: 5', 'Transfer-Encoding: chunked'], '0\r\n\r\n'), 400, 'bad_request'],
      ['no Host header', () => `GET /v1/usage HTTP/1.1\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`, 400, 'bad_request'],
      ['headers over 16 KiB', () => http11('GET', '/v1/usage', [`X-API-Key: ${key}`, `X-Pad: ${'a'.repeat(17 * 1024)}`]), 431, 'header_fields_too_large'],
      ['3,000 headers', () => http11('GET', '/v1/usage', [`X-API-Key: ${key}`, ...Array.from({ length: 3000 }, (_, i) => `X-H${i}: 1`)]), 431, 'header_fields_too_large'],
      ['101 small headers', () => http11('GET', '/v1/usage', [`X-API-Key: ${key}`, ...Array.from({ length: 98 }, (_, i) => `X-H${i}: 1`)]), 431, 'header_fields_too_large'],
      ['not HTTP at all', () => 'HELLO THERE\r\n\r\n', 400, 'bad_request'],
    ])('%s', async (_name, request, status, code) => {
      const error = expectStandardError(await rawRequest(base, request()), status, code);
      expect(loggedWith(error.request_id).length, `log line with ${error.request_id}`).toBeGreaterThan(0);
    });

    it('the limits are the ones chosen: 100 headers and 16 KiB pass', async () => {
      // Host, Connection and the key are three of the 100.
      const res = await rawRequest(base, http11('GET', '/v1/usage', [`X-API-Key: ${key}`, ...Array.from({ length: 97 }, (_, i) => `X-H${i}: 1`)]));
      expect(res.status, res.body).toBe(200);
      const padded = await rawRequest(base, http11('GET', '/v1/usage', [`X-API-Key: ${key}`, `X-Pad: ${'a'.repeat(15 * 1024)}`]));
      expect(padded.status, padded.body).toBe(200);
    });

    it('server timeouts are set on purpose', () => {
      const server = h.app.server;
      expect({
        headersTimeout: server.headersTimeout, requestTimeout: server.requestTimeout,
        keepAliveTimeout: server.keepAliveTimeout, maxHeadersCount: server.maxHeadersCount,
      }).toEqual({
        headersTimeout: SERVER_LIMITS.headersTimeoutMs, requestTimeout: SERVER_LIMITS.requestTimeoutMs,
        keepAliveTimeout: SERVER_LIMITS.keepAliveTimeoutMs, maxHeadersCount: SERVER_LIMITS.maxHeaders + 1,
      });
      expect(SERVER_LIMITS.headersTimeoutMs).toBeLessThan(SERVER_LIMITS.requestTimeoutMs);
    });
  });

  describe('2. HEAD on a lookup', () => {
    it('→ 405 with Allow: GET, and consumes nothing', async () => {
      const res = await rawRequest(base, http11('HEAD', `/v1/track/delhivery/${awbFor('delhivery', 2)}`, [`X-API-Key: ${key}`]));
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET');
      expect(res.headers['x-request-id']).toMatch(/^req_/);
      expect(res.body).toBe('');
      expect((await h.usage(key)).period.lookups_used).toBe(0);
    });
  });

  describe('3. wrong methods and oversized bodies', () => {
    const track = `/v1/track/delhivery/${awbFor('delhivery', 2)}`;
    it.each([
      ['OPTIONS', track, 'GET'], ['TRACE', track, 'GET'], ['PROPFIND', track, 'GET'], ['PURGE', track, 'GET'],
      ['PUT', '/trial', 'GET, POST'], ['DELETE', '/trial', 'GET, POST'], ['PATCH', '/trial', 'GET, POST'],
    ])('%s %s → 405 with Allow: %s', async (method, path, allow) => {
      const res = await rawRequest(base, http11(method, path, [`X-API-Key: ${key}`]));
      expectStandardError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe(allow);
    });

    it('POST on a lookup with a bad or a huge body → 405, not 400 or 413', async () => {
      for (const body of ['{not json', JSON.stringify({ pad: 'x'.repeat(200 * 1024) })]) {
        const res = await rawRequest(base, http11('POST', track, [`X-API-Key: ${key}`, 'Content-Type: application/json'], body));
        expectStandardError(res, 405, 'method_not_allowed');
        expect(res.headers.allow).toBe('GET');
      }
    });

    it.each([
      ['POST /admin/keys', 'POST', '/admin/keys', [`Authorization: Bearer ${ADMIN_TOKEN}`, 'Content-Type: application/json'], JSON.stringify({ plan: 'starter', mode: 'test', email: 'a@example.com', pad: 'x'.repeat(100 * 1024) })],
      ['POST /trial', 'POST', '/trial', ['Content-Type: application/x-www-form-urlencoded'], `email=a%40example.com&pad=${'x'.repeat(100 * 1024)}`],
      ['POST /v1/trackings', 'POST', '/v1/trackings', [`X-API-Key: ${key}`, 'Content-Type: application/json'], JSON.stringify({ carrier: 'delhivery', awb: 'x'.repeat(100 * 1024) })],
    ])('an oversized body on %s → 413 payload_too_large', async (_name, method, path, headers, body) => {
      expectStandardError(await rawRequest(base, http11(method, path, headers, body)), 413, 'payload_too_large');
    });
  });

  describe('4. query values are not logged', () => {
    it('an admin token or a key in a query string of an admin or API path never reaches the log', async () => {
      const secret = 'query-secret-5f1d0c';
      const answers = await Promise.all([
        rawRequest(base, http11('GET', `/admin/keys/trk_live_AAAAAAA?token=${ADMIN_TOKEN}`)),
        rawRequest(base, http11('GET', `/admin/keys/trk_live_AAAAAAA?token=${ADMIN_TOKEN}`, [`Authorization: Bearer ${ADMIN_TOKEN}`])),
        rawRequest(base, http11('GET', `/v1/usage?api_key=${key}&note=${secret}`, [`X-API-Key: ${key}`])),
        rawRequest(base, http11('GET', `/v1/track/delhivery/${awbFor('delhivery', 2)}?${secret}`, [`X-API-Key: ${key}`])),
        rawRequest(base, http11('GET', `/v1/track/delhivery/%zz?token=${ADMIN_TOKEN}`)),
      ]);
      const ids = answers.map((res) => res.headers['x-request-id']!);
      const lines = ids.flatMap(loggedWith);
      expect(lines.length).toBeGreaterThanOrEqual(ids.length);
      const text = lines.join('\n');
      expect(text).toContain('token=[redacted]');
      expect(text).toContain('api_key=[redacted]');
      for (const leaked of [ADMIN_TOKEN, key, secret]) expect(text).not.toContain(leaked);
    });
  });

  describe('5. the admin API takes JSON only', () => {
    it.each([
      ['application/x-www-form-urlencoded', 'plan=starter&mode=test&email=form%40example.com'],
      ['text/plain', '{"plan":"starter","mode":"test","email":"text@example.com"}'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="plan"\r\n\r\nstarter\r\n--x--\r\n'],
    ])('%s → 415 unsupported_media_type, no key created', async (type, body) => {
      const before = (await h.deps.access.list()).length;
      const res = await rawRequest(base, http11('POST', '/admin/keys', [`Authorization: Bearer ${ADMIN_TOKEN}`, `Content-Type: ${type}`], body));
      expectStandardError(res, 415, 'unsupported_media_type');
      expect((await h.deps.access.list()).length).toBe(before);
    });

    it('the API routes do not take forms either; the trial page does', async () => {
      const watch = await rawRequest(base, http11('POST', '/v1/trackings', [`X-API-Key: ${key}`, 'Content-Type: application/x-www-form-urlencoded'], `carrier=delhivery&awb=${awbFor('delhivery', 2)}`));
      expectStandardError(watch, 415, 'unsupported_media_type');
      const trial = await rawRequest(base, http11('POST', '/trial', ['Content-Type: application/x-www-form-urlencoded'], 'email=form.user%40example.com'));
      // Parsed and answered (the key itself goes by e-mail since issue 29).
      expect(trial.status, trial.body).toBe(202);
      expect(trial.body).toContain("we've e-mailed it");
    });
  });

  describe('7. caching and security headers', () => {
    it('the trial page\'s answer is never stored; HTML pages carry CSP, framing and nosniff headers', async () => {
      const issued = await rawRequest(base, http11('POST', '/trial', ['Content-Type: application/x-www-form-urlencoded'], 'email=headers%40example.com'));
      expect(issued.status).toBe(202);
      expect(issued.headers['cache-control']).toBe('no-store');
      for (const res of [issued, await rawRequest(base, http11('GET', '/trial')), await rawRequest(base, http11('GET', '/docs/'))]) {
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
        expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
        expect(res.headers['x-frame-options']).toBe('DENY');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
      }
    });

    it('JSON answers carry nosniff; an admin answer naming a key is never stored', async () => {
      for (const path of ['/healthz', '/openapi.json', '/v1/usage']) {
        const res = await rawRequest(base, http11('GET', path, [`X-API-Key: ${key}`]));
        expect(res.status).toBe(200);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
      }
      const created = await rawRequest(base, http11('POST', '/admin/keys', [`Authorization: Bearer ${ADMIN_TOKEN}`, 'Content-Type: application/json'], JSON.stringify({ plan: 'starter', mode: 'test', email: 'nostore@example.com' })));
      expect(created.status).toBe(201);
      expect(created.headers['cache-control']).toBe('no-store');
    });
  });
});
}

export function timeoutsSuite(): void {
describe('timeouts over real HTTP', () => {
  const log = logSink();
  let h: ApiHarness;
  let base: string;
  beforeAll(async () => {
    // Shortened so the test waits a moment; the production values are checked above.
    h = await startApiHarness({
      logLevel: 'info',
      deps: (deps) => ({ ...deps, logStream: log.stream, serverLimits: { headersTimeoutMs: 300, requestTimeoutMs: 600, timeoutCheckIntervalMs: 50 } }),
    });
    base = await h.listen();
  });
  afterAll(() => h.close());

  it.each([
    ['headers that never end (slow loris)', 'GET /v1/usage HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n'],
    ['a body that never arrives', `POST /admin/keys HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"plan":`],
  ])('%s → 408 request_timeout in the standard body, logged', async (_name, partial) => {
    const error = expectStandardError(await rawRequest(base, partial), 408, 'request_timeout');
    expect(log.lines.some((line) => line.includes(error.request_id))).toBe(true);
  });
});
}

export function adminThrottleSuite(): void {
describe('wrong admin tokens are throttled per address', () => {
  let h: ApiHarness;
  beforeEach(async () => { h = await startApiHarness(); });
  afterEach(() => h.close());

  const adminCall = (token: string, remoteAddress: string) => h.app.inject({
    method: 'GET', url: '/admin/keys/trk_live_AAAAAAA', remoteAddress, headers: { authorization: `Bearer ${token}` },
  });

  it('after 10 wrong tokens in 15 minutes every admin call from that address → 429 with Retry-After, until the window moves', async () => {
    for (let i = 0; i < 10; i++) expect((await adminCall(`wrong-${i}`, '198.51.100.20')).statusCode).toBe(401);
    const refused = await adminCall(ADMIN_TOKEN, '198.51.100.20');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: { code: 'too_many_attempts' } });
    expect(refused.headers['retry-after']).toBe(String(15 * 60));
    // Another address is unaffected; without a token nothing is counted.
    expect((await adminCall(ADMIN_TOKEN, '198.51.100.21')).statusCode).toBe(404);
    h.clock.advance(15 * 60_000);
    expect((await adminCall(ADMIN_TOKEN, '198.51.100.20')).statusCode).toBe(404);
  });
});
}

export function storeBackedHostileSuite(store: StoreKind): void {
  describe(`store-backed hostile cases (${store} store)`, () => {
  let h: ApiHarness;
  beforeEach(async () => { h = await startApiHarness({ store }); });
  afterEach(() => h.close());

  it('6. a key whose period starts later → 402 payment_required naming the start, counting nothing; it works once the period starts', async () => {
    const start = h.clock.iso(2 * DAY_MS);
    const k = await h.createKey({ period_start: start });
    const awb = awbFor('delhivery', 2);
    for (let i = 0; i < 3; i++) {
      const res = await h.track(k.key, 'delhivery', awb);
      expect(res.statusCode, res.body).toBe(402);
      expect(res.json()).toMatchObject({ error: { code: 'payment_required' } });
      expect(res.json().error.message).toContain(start);
    }
    // Bad input from that key is still refused for the period first, as for an expired key.
    expect((await h.track(k.key, 'delhivery', 'x')).statusCode).toBe(402);
    // A batch is refused the same way, whole, with or without an Idempotency-Key.
    for (const headers of [{}, { 'idempotency-key': 'not-started-1' }]) {
      const batch = await h.app.inject({ method: 'POST', url: '/v1/track/batch', headers: { 'x-api-key': k.key, ...headers }, payload: { items: [{ carrier: 'delhivery', awb }] } });
      expect(batch.statusCode, batch.body).toBe(402);
      expect(batch.json().error.message).toContain(start);
    }
    expect((await h.usage(k.key)).period.lookups_used).toBe(0);

    h.clock.advance(2 * DAY_MS);
    expect((await h.track(k.key, 'delhivery', awb)).statusCode).toBe(200);
    expect((await h.usage(k.key)).period.lookups_used).toBe(1);
  });

  it('8. the trial limit per address survives a restart', async () => {
    const post = (email: string) => h.app.inject({
      method: 'POST', url: '/trial', remoteAddress: '203.0.113.50',
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ email }).toString(),
    });
    for (let i = 0; i < 5; i++) expect((await post(`restart${i}@example.com`)).statusCode).toBe(202);
    await h.restart();
    const refused = await post('restart5@example.com');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe(String(HOUR_MS / 1000));
    h.clock.advance(HOUR_MS);
    expect((await post('restart6@example.com')).statusCode).toBe(202);
  });
  });
}
