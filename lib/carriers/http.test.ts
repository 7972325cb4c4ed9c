import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CarrierUnavailableError, createHttpSend, type ClosableHttpSend, type HttpSendOptions } from './http.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

/** A real local carrier whose behaviour each test sets, counting calls, connections and concurrency. */
const carrier = {
  server: undefined as Server | undefined,
  url: '',
  handler: ((_req, res) => { res.end('ok'); }) as Handler,
  calls: 0,
  connections: 0,
  inFlight: 0,
  maxInFlight: 0,
  reset(handler: Handler) {
    this.handler = handler;
    this.calls = 0;
    this.connections = 0;
    this.inFlight = 0;
    this.maxInFlight = 0;
  },
};

beforeAll(async () => {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => { body += chunk; });
    req.on('end', () => {
      carrier.calls++;
      carrier.inFlight++;
      carrier.maxInFlight = Math.max(carrier.maxInFlight, carrier.inFlight);
      res.on('close', () => { carrier.inFlight--; });
      void carrier.handler(req, res, body);
    });
  });
  server.on('connection', () => { carrier.connections++; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  carrier.server = server;
  carrier.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  carrier.server?.closeAllConnections();
  await new Promise((resolve) => carrier.server?.close(resolve));
});

const transports: ClosableHttpSend[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

function transport(options: HttpSendOptions = {}): ClosableHttpSend {
  const send = createHttpSend({ name: 'testcarrier', retryBaseDelayMs: 5, retryMaxDelayMs: 20, ...options });
  transports.push(send);
  return send;
}

const answer = (status: number, body = '') => (_req: IncomingMessage, res: ServerResponse) => {
  res.statusCode = status;
  res.end(body);
};

/** The error a call rejects with, failing the test when it resolves. */
async function failure(call: Promise<unknown>): Promise<CarrierUnavailableError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(CarrierUnavailableError);
    return error as CarrierUnavailableError;
  }
  throw new Error('expected the call to fail');
}

describe('createHttpSend', () => {
  it('returns any answer, errors included, with the body as text and lower-case headers', async () => {
    carrier.reset((req, res, body) => {
      res.statusCode = 404;
      res.setHeader('X-Carrier', 'yes');
      res.end(`${req.method} ${req.url} ${req.headers.authorization} ${body}`);
    });
    const send = transport();
    const response = await send({ method: 'POST', url: `${carrier.url}/track?x=1`, headers: { Authorization: 'Token t' }, body: '{"a":1}' });
    expect(response.status).toBe(404);
    expect(response.headers['x-carrier']).toBe('yes');
    expect(response.body).toBe('POST /track?x=1 Token t {"a":1}');
  });

  it('reuses keep-alive connections for consecutive calls', async () => {
    carrier.reset(answer(200, 'ok'));
    const send = transport();
    for (let i = 0; i < 10; i++) expect((await send({ method: 'GET', url: `${carrier.url}/a` })).body).toBe('ok');
    expect(carrier.calls).toBe(10);
    // undici may open a second socket while the first is being released; never one per call.
    expect(carrier.connections).toBeLessThanOrEqual(2);
  });

  it('gives up after the timeout, without retrying, and reports it', async () => {
    carrier.reset(async (_req, res) => {
      await sleep(600);
      if (!res.destroyed) res.end('late');
    });
    const send = transport({ timeoutMs: 100 });
    const started = Date.now();
    const error = await failure(send({ method: 'GET', url: `${carrier.url}/slow` }));
    expect(error.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(450);
    expect(carrier.calls).toBe(1);
  });

  it('waits for an answer that comes within the timeout', async () => {
    carrier.reset(async (_req, res) => {
      await sleep(150);
      res.end('slow but fine');
    });
    const response = await transport({ timeoutMs: 1_000 })({ method: 'GET', url: `${carrier.url}/slow` });
    expect(response.body).toBe('slow but fine');
  });

  it('retries a GET on 502/503/504 and returns the answer that finally came', async () => {
    const statuses = [503, 502, 200];
    carrier.reset((_req, res) => {
      res.statusCode = statuses[carrier.calls - 1] ?? 500;
      res.end(`attempt ${carrier.calls}`);
    });
    const response = await transport()({ method: 'GET', url: `${carrier.url}/flaky` });
    expect(response).toMatchObject({ status: 200, body: 'attempt 3' });
    expect(carrier.calls).toBe(3);
  });

  it('returns the last 503 after the retries are spent', async () => {
    carrier.reset(answer(503, 'down'));
    const response = await transport({ retries: 2 })({ method: 'GET', url: `${carrier.url}/down` });
    expect(response).toMatchObject({ status: 503, body: 'down' });
    expect(carrier.calls).toBe(3);
  });

  it('never retries a POST unless it is marked idempotent', async () => {
    carrier.reset(answer(503, 'down'));
    const send = transport();
    expect((await send({ method: 'POST', url: `${carrier.url}/book`, body: 'x' })).status).toBe(503);
    expect(carrier.calls).toBe(1);

    carrier.reset(answer(503, 'down'));
    expect((await send({ method: 'POST', url: `${carrier.url}/track`, body: 'x', idempotent: true })).status).toBe(503);
    expect(carrier.calls).toBe(3);
  });

  it('does not retry answers that repeating cannot change (500, 404, 429)', async () => {
    const send = transport();
    for (const status of [500, 404, 429]) {
      carrier.reset(answer(status));
      expect((await send({ method: 'GET', url: `${carrier.url}/x` })).status).toBe(status);
      expect(carrier.calls).toBe(1);
    }
  });

  it('retries a dropped connection for safe requests only, then reports a network failure', async () => {
    carrier.reset((req) => { req.socket.destroy(); });
    const send = transport();
    expect((await failure(send({ method: 'GET', url: `${carrier.url}/drop` }))).reason).toBe('network');
    expect(carrier.calls).toBe(3);

    carrier.reset((req) => { req.socket.destroy(); });
    expect((await failure(send({ method: 'POST', url: `${carrier.url}/drop`, body: 'x' }))).reason).toBe('network');
    expect(carrier.calls).toBe(1);
  });

  it('reports a carrier nobody listens on as a network failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(transport({ retries: 0 })({ method: 'GET', url: `http://127.0.0.1:${port}/` }));
    expect(error.reason).toBe('network');
    expect(error.message).toMatch(/ECONNREFUSED/);
  });

  it('opens the breaker after N consecutive failures, fails fast, and recovers after the half-open time', async () => {
    carrier.reset(answer(503));
    const send = transport({ retries: 0, breakerThreshold: 3, breakerHalfOpenAfterMs: 250 });
    for (let i = 0; i < 3; i++) expect((await send({ method: 'GET', url: `${carrier.url}/x` })).status).toBe(503);
    expect(carrier.calls).toBe(3);

    const started = Date.now();
    const error = await failure(send({ method: 'GET', url: `${carrier.url}/x` }));
    expect(error.reason).toBe('circuit_open');
    expect(Date.now() - started).toBeLessThan(50);
    expect(carrier.calls).toBe(3);

    carrier.reset(answer(200, 'back'));
    await sleep(300);
    expect((await send({ method: 'GET', url: `${carrier.url}/x` })).body).toBe('back');
    expect((await send({ method: 'GET', url: `${carrier.url}/x` })).body).toBe('back');
    expect(carrier.calls).toBe(2);
  });

  it('counts timeouts as breaker failures', async () => {
    carrier.reset(async (_req, res) => {
      await sleep(300);
      if (!res.destroyed) res.end('late');
    });
    const send = transport({ retries: 0, timeoutMs: 50, breakerThreshold: 2, breakerHalfOpenAfterMs: 5_000 });
    expect((await failure(send({ method: 'GET', url: `${carrier.url}/x` }))).reason).toBe('timeout');
    expect((await failure(send({ method: 'GET', url: `${carrier.url}/x` }))).reason).toBe('timeout');
    expect((await failure(send({ method: 'GET', url: `${carrier.url}/x` }))).reason).toBe('circuit_open');
    expect(carrier.calls).toBe(2);
  });

  it('keeps a success between failures from opening the breaker', async () => {
    const statuses = [503, 503, 200, 503, 503];
    carrier.reset((_req, res) => {
      res.statusCode = statuses[carrier.calls - 1] ?? 200;
      res.end();
    });
    const send = transport({ retries: 0, breakerThreshold: 3 });
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push((await send({ method: 'GET', url: `${carrier.url}/x` })).status);
    expect(seen).toEqual([503, 503, 200, 503, 503, 200]);
  });

  it('keeps at most maxConcurrent calls in flight and queues the rest', async () => {
    carrier.reset(async (_req, res) => {
      await sleep(60);
      res.end('done');
    });
    const send = transport({ maxConcurrent: 3 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => send({ method: 'GET', url: `${carrier.url}/x` })));
    expect(answers.every((a) => a.body === 'done')).toBe(true);
    expect(carrier.calls).toBe(10);
    expect(carrier.maxInFlight).toBe(3);
  });

  it('fails at once as overloaded when the queue is full', async () => {
    carrier.reset(async (_req, res) => {
      await sleep(100);
      res.end('done');
    });
    const send = transport({ maxConcurrent: 1, maxQueued: 1 });
    const calls = Array.from({ length: 3 }, () => send({ method: 'GET', url: `${carrier.url}/x` }));
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const rejected = settled[2] as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(CarrierUnavailableError);
    expect((rejected.reason as CarrierUnavailableError).reason).toBe('overloaded');
  });
});
