/**
 * The reference of `npm run bench -- api`: bare Fastify (defaults, no logger) with one route that
 * answers the tracking record the real API answered (BENCH_BODY_FILE) as bytes prepared once: the
 * yardstick is the framework's own cost of answering, not a JSON.stringify per request (which made
 * it ~40 % slow and flattered the ratio). Forked by bench/api.ts (its own process, the same Node);
 * reports its URL over IPC.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { serveParent } from './protocol.ts';

const bodyFile = process.env.BENCH_BODY_FILE;
if (!bodyFile) throw new Error('BENCH_BODY_FILE is not set');
// Parsed and re-serialized once, so the bytes are those JSON.stringify gives, as the API sends.
const body = Buffer.from(JSON.stringify(JSON.parse(readFileSync(bodyFile, 'utf8'))));

const app = Fastify();
app.get('/v1/track/:carrier/:awb', (_request, reply) => {
  reply.header('content-type', 'application/json; charset=utf-8').send(body);
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
serveParent(() => app.close());
process.send?.({ type: 'ready', url });
