/**
 * A webhook receiver on loopback for tests: every request is verified with the `standardwebhooks`
 * npm package (an implementation nobody here wrote) against the secrets it is given; one that
 * verifies with none is recorded and answered 400, so a bad signature fails the test that sent it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedDelivery {
  id: string;
  timestamp: number;
  body: unknown;
  rawBody: string;
  headers: Record<string, string>;
  /** Indexes into the secrets that verified this request. */
  verifiedWith: number[];
  answeredStatus: number;
  receivedAt: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface Receiver {
  url: string;
  /** Every request, in arrival order. */
  deliveries: ReceivedDelivery[];
  /** Requests answered 2xx. */
  accepted(): ReceivedDelivery[];
  setSecrets(secrets: string[]): void;
  respond(answer: (delivery: { id: string; attemptOfThisId: number; body: unknown }) => ReceiverAnswer): void;
  waitFor(predicate: (receiver: Receiver) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(options: { secrets?: string[] } = {}): Promise<Receiver> {
  let secrets = options.secrets ?? [];
  let answer: (d: { id: string; attemptOfThisId: number; body: unknown }) => ReceiverAnswer = () => ({ status: 204 });
  const deliveries: ReceivedDelivery[] = [];
  const attemptsById = new Map<string, number>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v ?? '']));
    const verifiedWith: number[] = [];
    secrets.forEach((secret, i) => {
      try {
        new Webhook(secret).verify(rawBody, headers);
        verifiedWith.push(i);
      } catch {
        // not signed with this secret
      }
    });
    const id = headers['webhook-id'] ?? '';
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = null;
    }
    const attemptOfThisId = (attemptsById.get(id) ?? 0) + 1;
    attemptsById.set(id, attemptOfThisId);
    const reply = verifiedWith.length === 0 ? { status: 400 } : answer({ id, attemptOfThisId, body });
    deliveries.push({ id, timestamp: Number(headers['webhook-timestamp']), body, rawBody, headers, verifiedWith, answeredStatus: reply.status, receivedAt: Date.now() });
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    res.writeHead(reply.status, reply.headers ?? {});
    res.end();
  };

  const server = createServer((req, res) => { void handle(req, res); });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    accepted: () => deliveries.filter((d) => d.answeredStatus >= 200 && d.answeredStatus < 300),
    setSecrets(next) { secrets = next; },
    respond(next) { answer = next; },
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${deliveries.length} requests so far)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
