/**
 * A webhook receiver for tests, on 127.0.0.1 with a free port. It checks every request with the
 * `standardwebhooks` package (the reference implementation, not our signing code) against each
 * configured secret: a request no secret verifies is recorded with `verifiedWith: []` and answered
 * 400, so a test that expects deliveries notices bad signatures. Verified requests are answered as
 * `respond` says (default 204), optionally after a delay.
 *
 * The package also checks the timestamp is within 5 minutes of now, as a real receiver would.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { StandingOf } from '../../access/standing.ts';
import { parseAllowedTargets } from '../url-policy.ts';

export interface ReceivedDelivery {
  id: string;
  /** `webhook-timestamp` (unix seconds); NaN when absent or not a number. */
  timestamp: number;
  /** The JSON body parsed; null when it was not JSON. */
  body: unknown;
  rawBody: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** Indexes into the secrets (at arrival) that verified this request; [] = none. */
  verifiedWith: number[];
  /** The status the receiver chose (400 for an unverified request). */
  answeredStatus: number;
  /** Date.now() at arrival. */
  receivedAt: number;
  /** 1 for the first request with this `webhook-id`, 2 for the next... */
  attemptOfThisId?: number;
  /** false until the answer is fully written; stays false if the sender hung up first (timeout). */
  answered?: boolean;
}

export interface ResponseSpec {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export type Responder = (delivery: { id: string; attemptOfThisId: number; body: unknown }) => ResponseSpec;

export interface Receiver {
  /** Base URL of the receiver (any path is accepted), e.g. http://127.0.0.1:41234/webhooks */
  url: string;
  /** Every attempt, in arrival order, including unverified ones. */
  deliveries: ReceivedDelivery[];
  /** The attempts answered 2xx (and whose answer was written before the sender hung up). */
  accepted(): ReceivedDelivery[];
  setSecrets(secrets: string[]): void;
  respond(fn: Responder): void;
  /** Resolves once the predicate holds (checked now and after every arrival and answer). */
  waitFor(predicate: (r: Receiver) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_WAIT_MS = 10_000;

function lowerCaseHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Indexes of the secrets that verify the request; a malformed secret simply verifies nothing. */
function verifyingSecrets(secrets: readonly string[], rawBody: string, headers: Record<string, string>): number[] {
  const indexes: number[] = [];
  secrets.forEach((secret, index) => {
    try {
      new Webhook(secret).verify(rawBody, headers, { jsonParse: false });
      indexes.push(index);
    } catch {
      // Not this one.
    }
  });
  return indexes;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return null;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Without secrets every request is unverified (400) until setSecrets is called. */
export async function startReceiver(options: { secrets?: string[] } = {}): Promise<Receiver> {
  let secrets = [...(options.secrets ?? [])];
  let responder: Responder = () => ({ status: 204 });
  const attemptsById = new Map<string, number>();
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  const notify = () => { for (const check of [...waiters]) check(); };

  const answer = (res: ServerResponse, delivery: ReceivedDelivery, spec: ResponseSpec) => {
    res.once('finish', () => { delivery.answered = true; notify(); });
    res.writeHead(spec.status, spec.headers);
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const rawBody = await readBody(req);
    const headers = lowerCaseHeaders(req);
    const id = headers['webhook-id'] ?? '';
    const attemptOfThisId = (attemptsById.get(id) ?? 0) + 1;
    attemptsById.set(id, attemptOfThisId);
    const body = parseJson(rawBody);
    const verifiedWith = verifyingSecrets(secrets, rawBody, headers);
    let spec: ResponseSpec = { status: 400 };
    if (verifiedWith.length > 0) {
      try {
        spec = responder({ id, attemptOfThisId, body });
      } catch {
        spec = { status: 500 };
      }
    }
    const timestampHeader = headers['webhook-timestamp'];
    const delivery: ReceivedDelivery = {
      id,
      timestamp: timestampHeader !== undefined && /^\d+$/.test(timestampHeader) ? Number(timestampHeader) : Number.NaN,
      body,
      rawBody,
      headers,
      verifiedWith,
      answeredStatus: spec.status,
      receivedAt: Date.now(),
      attemptOfThisId,
      answered: false,
    };
    receiver.deliveries.push(delivery);
    notify();
    const delayMs = spec.delayMs ?? 0;
    if (delayMs <= 0) {
      answer(res, delivery, spec);
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) answer(res, delivery, spec);
    }, delayMs);
    timers.add(timer);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/webhooks`,
    deliveries: [],
    accepted() {
      return this.deliveries.filter((d) => d.answeredStatus >= 200 && d.answeredStatus < 300 && d.answered === true);
    },
    setSecrets(next) {
      secrets = [...next];
    },
    respond(fn) {
      responder = fn;
    },
    waitFor(predicate, timeoutMs = DEFAULT_WAIT_MS) {
      return new Promise<void>((resolve, reject) => {
        const finish = (error?: Error) => {
          waiters.delete(check);
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        const check = () => {
          try {
            if (predicate(receiver)) finish();
          } catch (error) {
            finish(error instanceof Error ? error : new Error(String(error)));
          }
        };
        const timer = setTimeout(() => {
          const seen = receiver.deliveries.map((d) => `${d.id || '(no id)'}:${d.answeredStatus}`).join(', ');
          finish(new Error(`receiver: condition not met within ${timeoutMs} ms; ${receiver.deliveries.length} deliveries [${seen}]`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** The operator's opening of loopback that tests (and benchmarks) with a receiver here need. */
export const LOOPBACK_TARGETS = parseAllowedTargets('127.0.0.1/32');

/**
 * Every key active: for tests of the push machinery itself, where no key's standing is in
 * question (tests of standings use a real access store and lib/access `standingFromStore`).
 */
export const EVERY_KEY_ACTIVE: StandingOf = async () => 'active';
