/**
 * The reference of `npm run bench -- api`: bare Fastify (defaults, no logger) with one route that
 * answers the tracking record the real API answered (BENCH_BODY_FILE), serialized on every request
 * as the API does. Forked by bench/api.ts; reports its URL over IPC.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { serveParent } from './protocol.ts';

const bodyFile = process.env.BENCH_BODY_FILE;
if (!bodyFile) throw new Error('BENCH_BODY_FILE is not set');
const body = JSON.parse(readFileSync(bodyFile, 'utf8')) as unknown;

const app = Fastify();
app.get('/v1/track/:carrier/:awb', async () => body);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
serveParent(() => app.close());
process.send?.({ type: 'ready', url });
