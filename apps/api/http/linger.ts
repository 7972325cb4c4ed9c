/**
 * Refusals a client can read. An upload refused before its end (a 413 past the body limit, a CSV
 * whose header row is too long) is answered with `Connection: close` while the client is still
 * sending. Node then closes the socket as soon as the answer is written, with the rest of the
 * upload unread in the kernel's receive buffer, and a close with unread data sends a TCP RST: the
 * client, still writing, gets a connection reset and often never reads the answer it was sent
 * (one upload in three did). So for such an answer the connection lingers: the answer goes out
 * and our side is half-closed (FIN), the rest of the upload is read and dropped until the client
 * has sent it all, stops sending or closes, and only then the socket is destroyed; at most
 * LINGER_LIMITS' bytes and time, after which it is cut as before.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export interface LingerLimits {
  /** Request bytes read and dropped after a refusal at most (the analyzer's 16 MiB upload limit). */
  bytes: number;
  /** How long the connection may linger at most. */
  ms: number;
  /** Nothing received for this long: the client stopped sending, the connection ends. */
  idleMs: number;
}

export const LINGER_LIMITS: LingerLimits = { bytes: 16 * 2 ** 20, ms: 5_000, idleMs: 250 };

/**
 * Makes the request's connection linger when it closes (see the module comment). Node calls the
 * socket's destroySoon() once the answer is written on a connection that does not stay open:
 * this one ends our side, drains the request, then destroys.
 */
export function lingerBeforeClose(request: IncomingMessage, limits: LingerLimits = LINGER_LIMITS): void {
  const socket = request.socket;
  socket.destroySoon = function lingerThenDestroy(this: typeof socket) {
    if (this.writable) this.end();
    // Destroyed once the answer is flushed (as Node's own destroySoon does) and the upload is over.
    const done = () => {
      clearTimeout(timer);
      clearInterval(watch);
      if (this.writableFinished) this.destroy();
      else this.once('finish', () => this.destroy());
    };
    const timer = setTimeout(done, limits.ms);
    // Checked every 50 ms: the upload is over, or past the bytes bound, or the client stopped
    // sending (it read the answer and went on): nothing arrived for idleMs.
    const startedAt = this.bytesRead;
    let seen = startedAt;
    let seenAt = Date.now();
    const watch = setInterval(() => {
      if (this.bytesRead !== seen) [seen, seenAt] = [this.bytesRead, Date.now()];
      if (request.complete || seen - startedAt > limits.bytes || Date.now() - seenAt > limits.idleMs) done();
    }, 50);
    this.once('end', done);
    this.once('close', () => { clearTimeout(timer); clearInterval(watch); });
    if (request.complete) {
      done();
      return;
    }
    // Node's own way to discard the rest of a request's body (it does so for a keep-alive answer
    // sent before the body was read): the parser drops what arrives and keeps the socket reading,
    // also when the handler's reader destroyed the request stream.
    (request as IncomingMessage & { _dump(): void })._dump();
    this.resume();
  };
}

/** Every answer that closes its connection before the request's body was read whole lingers. */
export function registerLinger(app: FastifyInstance, limits: LingerLimits = LINGER_LIMITS): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && String(reply.getHeader('connection') ?? '').toLowerCase() === 'close') lingerBeforeClose(request.raw, limits);
    done(null, payload);
  });
}
