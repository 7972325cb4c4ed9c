/**
 * Refusals a client can read: uploads refused before their end (a CSV with a 10 MB header row, a
 * JSON body over the 64 KiB limit), sent by a client that writes its whole body before it reads,
 * each get their 4xx answer, never a connection reset, and the connection then ends. Over real HTTP on a loopback port (the embedded default).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';

interface Outcome {
  status: number | null;
  code: string | null;
  /** The client's error (ECONNRESET, EPIPE) when it came before it read an answer. */
  error: string | null;
}

/**
 * POSTs a `bytes`-byte body (`head`, then `fill` repeated) on a raw socket and reads only once all
 * of it is written, as clients that send their whole request before they read do (Python's
 * requests, many SDKs): a connection reset meanwhile loses the answer.
 */
function post(base: string, path: string, headers: Record<string, string>, head: string, fill: string, bytes: number): Promise<Outcome> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  const outcome: Outcome = { status: null, code: null, error: null };
  const failed = new Promise<void>((resolve) => socket.once('error', (err: NodeJS.ErrnoException) => {
    outcome.error ??= err.code ?? err.message;
    resolve();
  }));
  const requestHead = [`POST ${path} HTTP/1.1`, 'Host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${bytes}`, '', ''].join('\r\n');
  const written = (async () => {
    const chunk = Buffer.from(fill.repeat(Math.ceil(65_536 / fill.length)).slice(0, 65_536));
    let sent = Buffer.byteLength(head);
    const write = async (data: string | Buffer) => {
      if (socket.write(data)) return;
      await new Promise<void>((resolve) => {
        const go = () => { socket.off('drain', go); socket.off('close', go); resolve(); };
        socket.on('drain', go);
        socket.on('close', go);
      });
    };
    await write(requestHead + head);
    while (sent < bytes && !socket.destroyed) {
      const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
      sent += part.length;
      await write(part);
    }
  })();
  return (async () => {
    await Promise.race([written, failed]);
    if (outcome.error) return outcome;
    // Written whole: now the answer.
    let received = '';
    socket.setEncoding('utf8').on('data', (text: string) => { received += text; });
    await Promise.race([new Promise((resolve) => socket.once('close', resolve)), failed]);
    const [statusLine = '', body = ''] = [received.slice(0, received.indexOf('\r\n')), received.slice(received.indexOf('\r\n\r\n') + 4)];
    if (received) {
      outcome.status = Number(statusLine.split(' ')[1]);
      outcome.code = (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? null;
      outcome.error = null;
    }
    return outcome;
  })();
}

describe('uploads refused before their end are answered, not reset', () => {
  let h: ApiHarness;
  let base: string;
  let key: string;

  beforeAll(async () => {
    h = await startApiHarness();
    base = await h.listen();
    key = (await h.createKey({ plan: 'business', burst_per_second: 100_000 })).key;
  });
  afterAll(() => h.close());

  it('a CSV whose header row is 10 MB: 400 invalid_analysis, every time', { timeout: 60_000 }, async () => {
    const headers = { 'x-api-key': key, 'content-type': 'text/csv' };
    const outcomes: Outcome[] = [];
    for (let round = 0; round < 4; round++) {
      outcomes.push(...await Promise.all(Array.from({ length: 3 }, () => post(base, '/v1/analyses', headers, 'awb', ',x', 3 + 2 * 5_000_000))));
    }
    expect(outcomes).toEqual(outcomes.map(() => ({ status: 400, code: 'invalid_analysis', error: null })));
  });

  it('a JSON body over the 64 KiB limit: 413 payload_too_large, every time', { timeout: 60_000 }, async () => {
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const outcomes: Outcome[] = [];
    for (let round = 0; round < 4; round++) {
      outcomes.push(...await Promise.all(Array.from({ length: 3 }, () => post(base, '/v1/track/batch', headers, '{"items":["', 'x', 4 * 2 ** 20))));
    }
    expect(outcomes).toEqual(outcomes.map(() => ({ status: 413, code: 'payload_too_large', error: null })));
  });
});
