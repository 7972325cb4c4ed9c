/**
 * Test support: uploads written on raw sockets (node:net), so a test sees exactly when the server
 * answers and when it closes the connection (analyses-upload.test.ts, and its hostile uploader
 * worker, testutil/upload-worker.ts).
 */
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Upload {
  /** The answer's status line and headers (lower-case names), once it came; its body. */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** ms from the first byte written to the answer's last byte, and to the connection's end. */
  answeredAfterMs: number | null;
  closedAfterMs: number | null;
}

/**
 * Sends `head` then `bodyBytes` bytes of `pattern` (repeated) on a keep-alive connection until the
 * server answers or closes: as fast as the socket takes them, or one `pattern` per `paceMs` (a
 * client on a fast network, not one filling the kernel's buffers in a single synchronous loop).
 * Resolves once the connection ended, or `closeBoundMs` after a complete answer if it did not.
 */
export function upload(base: string, head: string, pattern: Buffer, bodyBytes: number, closeBoundMs: number, paceMs = 0): Promise<Upload> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  const started = performance.now();
  const result: Upload = { status: null, headers: {}, body: '', answeredAfterMs: null, closedAfterMs: null };
  let received = Buffer.alloc(0);
  let answered = false;
  return new Promise((resolve) => {
    let bound: NodeJS.Timeout | undefined;
    const finish = () => { clearTimeout(bound); resolve(result); };
    socket.on('error', () => undefined);
    socket.on('close', () => { result.closedAfterMs = performance.now() - started; finish(); });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (answered || end === -1) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? 0);
      if (received.length < end + 4 + length) return;
      answered = true;
      Object.assign(result, { status: Number(statusLine!.split(' ')[1]), headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8') });
      result.answeredAfterMs = performance.now() - started;
      // The connection should end now: wait for it, but no longer than the bound.
      bound = setTimeout(finish, closeBoundMs);
    });
    void (async () => {
      if (!socket.write(head)) await new Promise((r) => socket.once('drain', r));
      for (let sent = 0; sent < bodyBytes && !answered && !socket.destroyed; sent += pattern.length) {
        const slice = pattern.subarray(0, Math.min(pattern.length, bodyBytes - sent));
        if (!socket.write(slice)) {
          await new Promise<void>((resolve) => {
            const go = () => { socket.off('drain', go); socket.off('close', go); resolve(); };
            socket.on('drain', go);
            socket.on('close', go);
          });
        }
        if (paceMs > 0) await new Promise((resolve) => setTimeout(resolve, paceMs));
      }
    })();
  });
}

export const requestHead = (key: string, length: number) => [
  'POST /v1/analyses HTTP/1.1', 'Host: localhost', 'Connection: keep-alive', `X-API-Key: ${key}`,
  'Content-Type: text/csv', `Content-Length: ${length}`, '', '',
].join('\r\n');

