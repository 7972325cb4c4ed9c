import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../testutil/ports.ts';
import { keyVisibleError, parseRetryAfter, WEBHOOK_USER_AGENT, WebhookSender, type DeliveryRequest, type WebhookSenderOptions } from './sender.ts';
import { LOOPBACK_TARGETS } from './testutil/receiver.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

interface Seen { path: string; headers: IncomingMessage['headers']; body: string }

/** A real loopback endpoint: one handler per path, counting requests, connections and open sockets. */
const endpoint = {
  server: undefined as Server | undefined,
  port: 0,
  handlers: new Map<string, Handler>(),
  seen: [] as Seen[],
  connections: 0,
  openSockets: 0,
  maxOpenSockets: 0,
  reset() {
    this.handlers.clear();
    this.seen = [];
    this.connections = 0;
    this.maxOpenSockets = this.openSockets;
  },
};

beforeAll(async () => {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => { body += chunk; });
    req.on('end', () => {
      const path = req.url ?? '/';
      endpoint.seen.push({ path, headers: req.headers, body });
      const handler = endpoint.handlers.get(path) ?? ((_q: IncomingMessage, r: ServerResponse) => { r.statusCode = 404; r.end(); });
      handler(req, res, body);
    });
  });
  server.on('connection', (socket) => {
    endpoint.connections++;
    endpoint.openSockets++;
    endpoint.maxOpenSockets = Math.max(endpoint.maxOpenSockets, endpoint.openSockets);
    socket.on('close', () => { endpoint.openSockets--; });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.server = server;
  endpoint.port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  endpoint.server?.closeAllConnections();
  await new Promise((resolve) => endpoint.server?.close(resolve));
});

const senders: WebhookSender[] = [];
afterEach(async () => {
  // Drop the server side of kept-alive sockets first, so the next test counts only its own.
  endpoint.server?.closeAllConnections();
  await Promise.all(senders.splice(0).map((s) => s.close()));
  endpoint.reset();
});

function sender(options: WebhookSenderOptions = {}): WebhookSender {
  const s = new WebhookSender({ allowedTargets: LOOPBACK_TARGETS, ...options });
  senders.push(s);
  return s;
}

const local = (path: string) => `http://127.0.0.1:${endpoint.port}${path}`;

function delivery(url: string, overrides: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    endpointId: 'wh_1',
    url,
    mode: 'test',
    headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': '1790000000', 'webhook-signature': 'v1,abc=' },
    body: '{"type":"tracking.updated"}',
    ...overrides,
  };
}

const answer = (status: number, headers: Record<string, string> = {}, body = ''): Handler => (_req, res) => {
  res.writeHead(status, headers);
  res.end(body);
};

describe('WebhookSender: answers', () => {
  it('2xx is success, with latency; body, signature headers, content-type and user-agent are sent', async () => {
    endpoint.handlers.set('/in?x=1', answer(204));
    const outcome = await sender().send(delivery(local('/in?x=1')));
    expect(outcome).toEqual({ statusCode: 204, latencyMs: expect.any(Number), error: null, retryAfterSeconds: null, privateTarget: true });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(0);
    expect(endpoint.seen).toHaveLength(1);
    const seen = endpoint.seen[0]!;
    expect(seen.body).toBe('{"type":"tracking.updated"}');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['user-agent']).toBe(WEBHOOK_USER_AGENT);
    expect(seen.headers['webhook-id']).toBe('evt_1');
    expect(seen.headers['webhook-timestamp']).toBe('1790000000');
    expect(seen.headers['webhook-signature']).toBe('v1,abc=');
    expect(seen.headers.host).toBe(`127.0.0.1:${endpoint.port}`);
  });

  it('500 is a failure with its status', async () => {
    endpoint.handlers.set('/in', answer(500, {}, 'oops'));
    expect(await sender().send(delivery(local('/in'))))
      .toEqual({ statusCode: 500, latencyMs: expect.any(Number), error: 'HTTP 500', retryAfterSeconds: null, privateTarget: true });
  });

  it('429 with Retry-After: 30 gives retryAfterSeconds 30; an HTTP-date works too', async () => {
    endpoint.handlers.set('/in', answer(429, { 'retry-after': '30' }));
    expect(await sender().send(delivery(local('/in'))))
      .toEqual({ statusCode: 429, latencyMs: expect.any(Number), error: 'HTTP 429', retryAfterSeconds: 30, privateTarget: true });
    endpoint.handlers.set('/date', answer(503, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() }));
    const outcome = await sender().send(delivery(local('/date')));
    expect(outcome.statusCode).toBe(503);
    expect(outcome.retryAfterSeconds).toBeGreaterThanOrEqual(118);
    expect(outcome.retryAfterSeconds).toBeLessThanOrEqual(120);
  });

  it('a 302 is a failure and is not followed: the target is never requested', async () => {
    endpoint.handlers.set('/in', answer(302, { location: local('/target') }));
    endpoint.handlers.set('/target', answer(200));
    const outcome = await sender().send(delivery(local('/in')));
    expect(outcome).toEqual({
      statusCode: 302,
      latencyMs: expect.any(Number),
      error: `redirect not followed (302 to ${local('/target')})`,
      retryAfterSeconds: null,
      privateTarget: true,
    });
    expect(endpoint.seen.map((s) => s.path)).toEqual(['/in']);
    // The receiver is on loopback (opened by the operator): the key's log gets the bare status only.
    expect(keyVisibleError(outcome)).toBe('HTTP 302');
  });

  it('a large answer body is discarded without failing the delivery', async () => {
    endpoint.handlers.set('/big', answer(200, {}, 'x'.repeat(2 * 1024 * 1024)));
    expect(await sender().send(delivery(local('/big')))).toMatchObject({ statusCode: 200, error: null });
  });
});

describe('WebhookSender: no answer', () => {
  it('times out when the headers do not come', async () => {
    endpoint.handlers.set('/hang', () => { /* never answers */ });
    expect(await sender({ timeoutMs: 200 }).send(delivery(local('/hang'))))
      .toEqual({ statusCode: null, latencyMs: expect.any(Number), error: 'timeout after 200 ms', retryAfterSeconds: null, privateTarget: true });
  });

  it('times out when the body does not finish (the deadline covers headers and body)', async () => {
    endpoint.handlers.set('/trickle', (_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
    });
    const outcome = await sender({ timeoutMs: 300 }).send(delivery(local('/trickle')));
    expect(outcome).toMatchObject({ statusCode: null, error: 'timeout after 300 ms' });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(250);
  });

  it('reports a refused connection', async () => {
    const port = await freePort();
    expect(await sender().send(delivery(`http://127.0.0.1:${port}/in`)))
      .toMatchObject({ statusCode: null, error: 'connection refused', retryAfterSeconds: null });
  });

  it('reports a DNS failure', async () => {
    const lookup = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); };
    expect(await sender({ lookup }).send(delivery('https://gone.example.com/in', { mode: 'live' })))
      .toMatchObject({ statusCode: null, error: 'DNS lookup of gone.example.com failed (ENOTFOUND)' });
  });

  it('a DNS answer that never comes is bounded by the deadline too', async () => {
    const lookup = () => new Promise<string[]>(() => { /* never resolves */ });
    expect(await sender({ lookup, timeoutMs: 150 }).send(delivery('https://slow-dns.example.com/in', { mode: 'live' })))
      .toMatchObject({ statusCode: null, error: 'timeout after 150 ms' });
  });

  it('refuses URLs against the rules without connecting, and never throws', async () => {
    const s = sender({ allowedTargets: [] });
    expect(await s.send(delivery(local('/in'), { mode: 'live' })))
      .toMatchObject({ statusCode: null, error: 'refused: trk_live_ keys need an https url (http is allowed for trk_test_ keys only)' });
    expect(await s.send(delivery('not a url'))).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: url is not an absolute URL/) });
    expect(await s.send(delivery(`https://127.0.0.1:${endpoint.port}/in`, { mode: 'live' })))
      .toMatchObject({ statusCode: null, error: 'refused: 127.0.0.1 is a loopback address; webhook targets must be public addresses' });
    expect(endpoint.connections).toBe(0);
  });

  it('after close() sends fail without throwing', async () => {
    const s = sender();
    await s.close();
    expect(await s.send(delivery(local('/in')))).toMatchObject({ statusCode: null, error: 'sender closed' });
  });
});

describe('WebhookSender: addresses are checked at every attempt', () => {
  it.each(['127.0.0.1', '10.1.2.3', '169.254.169.254', '::1', '::ffff:10.0.0.1'])(
    'live: a host resolving to %s is refused without any connection',
    async (address) => {
      const asked: string[] = [];
      const lookup = async (host: string) => { asked.push(host); return [address]; };
      // Same port as the loopback endpoint: had the sender connected, the endpoint would count it.
      const outcome = await sender({ lookup, allowedTargets: [] }).send(delivery(`https://hooks.example.com:${endpoint.port}/in`, { mode: 'live' }));
      expect(outcome).toMatchObject({ statusCode: null, error: expect.stringMatching(new RegExp(`^refused: hooks\\.example\\.com resolves to ${address.replace(/\./g, '\\.')}, `)) });
      expect(asked).toEqual(['hooks.example.com']);
      expect(endpoint.connections).toBe(0);
    },
  );

  it('a host refused if ANY of its addresses is not allowed', async () => {
    const lookup = async () => ['8.8.8.8', '10.0.0.5'];
    expect(await sender({ lookup }).send(delivery('https://example.com/in', { mode: 'live' })))
      .toMatchObject({ statusCode: null, error: 'refused: example.com resolves to 10.0.0.5, a private address' });
  });

  it('connects to the checked address, not a fresh DNS answer, and re-checks the next attempt (rebinding)', async () => {
    endpoint.handlers.set('/in', answer(200));
    // receiver.test exists in no DNS: the first send can only succeed by connecting to the address
    // the check returned. The second attempt resolves the same host to a private address: refused,
    // although a kept-alive connection to the checked address is still open.
    const answers = [['127.0.0.1'], ['10.0.0.1']];
    const lookup = async () => answers.shift() ?? [];
    const s = sender({ lookup });
    const url = `http://receiver.test:${endpoint.port}/in`;
    expect(await s.send(delivery(url))).toMatchObject({ statusCode: 200, error: null });
    expect(endpoint.seen[0]!.headers.host).toBe(`receiver.test:${endpoint.port}`);
    expect(await s.send(delivery(url))).toMatchObject({ statusCode: null, error: 'refused: receiver.test resolves to 10.0.0.1, a private address' });
    expect(endpoint.seen).toHaveLength(1);
    expect(answers).toEqual([]);
  });

  it('test mode: localhost names go to loopback without asking DNS', async () => {
    endpoint.handlers.set('/in', answer(204));
    const lookup = async () => { throw new Error('DNS must not be asked'); };
    expect(await sender({ lookup }).send(delivery(`http://localhost:${endpoint.port}/in`))).toMatchObject({ statusCode: 204 });
  });
});

/** A self-signed certificate for receiver.test, made for these tests only (openssl req -x509, P-256). */
const TEST_TLS = {
  cert: `-----BEGIN CERTIFICATE-----
MIIBojCCAUegAwIBAgIUcWNO36mNuqpfLKRzNkIq4U7OtzwwCgYIKoZIzj0EAwIw
GDEWMBQGA1UEAwwNcmVjZWl2ZXIudGVzdDAgFw0yNjExMjMxNDU1MTlaGA8yMTI2
MTAzMDE0NTUxOVowGDEWMBQGA1UEAwwNcmVjZWl2ZXIudGVzdDBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABIc66sxzsKBNOPssf9iKTQSK2LdB4c4LkElT/4Kh219s
e/sVjKRptSA/fNVuo3P5CKQcIein2nOSCu3a2Undsv6jbTBrMB0GA1UdDgQWBBRm
WsQEMEfSB8LAqaSBS9WP7YRfFTAfBgNVHSMEGDAWgBRmWsQEMEfSB8LAqaSBS9WP
7YRfFTAPBgNVHRMBAf8EBTADAQH/MBgGA1UdEQQRMA+CDXJlY2VpdmVyLnRlc3Qw
CgYIKoZIzj0EAwIDSQAwRgIhAPMo4qUx9Z95n58ZNKJIdPjkkVVXNAbwqVE9VvR8
ZaRzAiEAqRuoX+qouUugMC0+HNk9+jxVPEzibEQPTTsguwf6/Mg=
-----END CERTIFICATE-----`,
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwogsYJxNoJTB0PF8
gICPJeC3aYyV7DNizKNaOTRyRVahRANCAASHOurMc7CgTTj7LH/Yik0Eiti3QeHO
C5BJU/+CodtfbHv7FYykabUgP3zVbqNz+QikHCHop9pzkgrt2tlJ3bL+
-----END PRIVATE KEY-----`,
};

describe('WebhookSender: https', () => {
  it('connects over TLS to the checked address, verifying the certificate against the host name', async () => {
    const servernames: string[] = [];
    const server = createHttpsServer(TEST_TLS, (req, res) => {
      req.resume();
      req.on('end', () => { res.writeHead(200); res.end(); });
    });
    server.on('secureConnection', (socket) => { servernames.push(String(socket.servername)); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      // receiver.test exists in no DNS: the TLS socket reaches 127.0.0.1 only through the checked lookup.
      const lookup = async () => ['127.0.0.1'];
      const url = `https://receiver.test:${port}/in`;
      expect(await sender({ lookup, ca: TEST_TLS.cert }).send(delivery(url))).toMatchObject({ statusCode: 200, error: null });
      expect(servernames).toEqual(['receiver.test']);
      // Without trusting the test certificate, Node's roots refuse it: certificates are verified.
      expect(await sender({ lookup }).send(delivery(url, { endpointId: 'wh_2' })))
        .toMatchObject({ statusCode: null, error: expect.stringMatching(/^TLS: .*self[- ]signed/) });
      // A certificate for another name is refused too.
      const other = `https://other.test:${port}/in`;
      expect(await sender({ lookup, ca: TEST_TLS.cert }).send(delivery(other, { endpointId: 'wh_3' })))
        .toMatchObject({ statusCode: null, error: expect.stringMatching(/^TLS: .*other\.test/) });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('WebhookSender: pools per endpoint', () => {
  it('a slow endpoint does not delay another endpoint on the same host', async () => {
    // The slow endpoint answers 2 s after each request, or as soon as the fast send has resolved:
    // only a sender that makes /fast wait behind /slow sees a slow answer first.
    const held: ServerResponse[] = [];
    let released = false;
    const release = () => { released = true; for (const res of held.splice(0)) res.end(); };
    endpoint.handlers.set('/slow', (_req, res) => {
      if (released) { res.end(); return; }
      held.push(res);
      setTimeout(() => { if (!res.writableEnded) res.end(); }, 2_000);
    });
    endpoint.handlers.set('/fast', answer(204));
    const s = sender({ connectionsPerEndpoint: 2 });
    const order: string[] = [];
    // More slow sends than the slow endpoint has connections: its queue is full when /fast is sent.
    const slow = Array.from({ length: 4 }, () =>
      s.send(delivery(local('/slow'), { endpointId: 'wh_slow' })).then((o) => { order.push('slow'); return o; }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const fast = s.send(delivery(local('/fast'), { endpointId: 'wh_fast' })).then((o) => { order.push('fast'); release(); return o; });
    const outcomes = await Promise.all([fast, ...slow]);
    expect(order[0]).toBe('fast');
    expect(outcomes.map((o) => o.statusCode)).toEqual([204, 200, 200, 200, 200]);
  });

  it('never opens more than connectionsPerEndpoint sockets to one endpoint', async () => {
    endpoint.handlers.set('/in', (_req, res) => { setTimeout(() => res.end(), 100); });
    const s = sender({ connectionsPerEndpoint: 3 });
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => s.send(delivery(local('/in')))));
    expect(outcomes.every((o) => o.statusCode === 200)).toBe(true);
    expect(endpoint.seen).toHaveLength(12);
    expect(endpoint.maxOpenSockets).toBe(3);
    expect(endpoint.connections).toBe(3);
  });

  it('idle pools are closed, and a later send opens a new one', async () => {
    endpoint.handlers.set('/in', answer(204));
    const s = sender({ idlePoolMs: 50 });
    expect(await s.send(delivery(local('/in')))).toMatchObject({ statusCode: 204 });
    expect(s.poolCount).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(s.poolCount).toBe(0);
    expect(await s.send(delivery(local('/in')))).toMatchObject({ statusCode: 204 });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');
  it('reads delay seconds and HTTP-dates, ignores the rest', () => {
    expect(parseRetryAfter('30', now)).toBe(30);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('', now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter('1.5', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});
