import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyMode, type BatchGranted, type KeyRecord } from '../../../lib/access/index.ts';
import { acceptKeyRecord, presentedKey } from '../auth/api-key.ts';
import { parseBatchBody, type BatchItem } from '../lookup/batch/body.ts';
import { guardBatch, idempotencyKeyOf, type Guard } from '../lookup/batch/idempotency.ts';
import { batchBody, runBatch } from '../lookup/batch/run.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { NOT_JSON, deferJsonErrors } from '../http/bodies.ts';
import { keyRefusedAtCount, limitHeaders } from '../lookup/metered.ts';
import { api } from '../openapi/spec.ts';
import { BatchAnswerSchema, BatchRequestSchema, IdempotencyHeaders } from '../openapi/schemas.ts';

/** What these routes use of the API's dependencies. */
type BatchDeps = Pick<ApiDeps, 'access' | 'clock' | 'idempotency' | 'metrics' | 'product' | 'tracking'>;


/** The headers of a batch's answer that its replays repeat (the limits as they were then). */
const REPLAYED_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Lookups-Remaining'];

function replayedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}

/** The key's record checked as a single lookup checks it (401, then 402), counting nothing. */
async function checkedKey(deps: BatchDeps, request: FastifyRequest, key: string, now: Date): Promise<KeyRecord> {
  const { record } = await deps.access.authorize(key, now, false);
  return acceptKeyRecord(request, record, now);
}

/**
 * The batch's access step (contracts.md): one request for the burst limit, one lookup per item
 * that passed its own checks, as many as the quotas leave. Throws what refuses the whole batch.
 */
async function countBatch(deps: BatchDeps, request: FastifyRequest, reply: FastifyReply, key: string, lookups: number, now: Date): Promise<BatchGranted> {
  const { record, consumed } = await deps.access.authorizeBatch(key, now, lookups);
  acceptKeyRecord(request, record, now);
  if (!consumed) throw new Error('the access store counted nothing for a batch of an existing key');
  if (!consumed.ok) {
    // The store refused the key itself: it changed between the record read and the count.
    if (!('limits' in consumed)) throw keyRefusedAtCount(consumed.code);
    limitHeaders(reply, consumed);
    throw new ApiError(
      'rate_limit_exceeded',
      `More than ${consumed.limits.burst} requests in one second (a batch is one request). Back off with a small random delay.`,
      { 'Retry-After': consumed.retryAfterSeconds ?? 1 },
    );
  }
  limitHeaders(reply, consumed);
  return consumed;
}

/**
 * POST /v1/track/batch: 1 to 100 lookups in one request, answered 200 with one result per item in
 * input order; each item metered as a single lookup would be. `Idempotency-Key` replays the first
 * answer (lib/idempotency).
 */
export function registerBatchRoute(app: FastifyInstance, deps: BatchDeps): void {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const now = new Date(deps.clock());
    const key = presentedKey(request);
    const idempotencyKey = idempotencyKeyOf(request);
    const parsed = request.body === NOT_JSON
      ? new ApiError('bad_request', 'The body must be JSON {"items": [{"carrier"?: "...", "awb": "..."}, ...]}.')
      : parseBatchBody(deps, request.body);

    // Key checks come first; a malformed body is then refused whole, counting nothing.
    let guard: Guard | null = null;
    if (parsed instanceof ApiError || idempotencyKey !== null) {
      const record = await checkedKey(deps, request, key, now);
      if (parsed instanceof ApiError) throw parsed;
      guard = await guardBatch(deps.idempotency, record.hash, idempotencyKey!, request.body, deps.clock);
      if (guard.kind === 'replay') {
        // The first answer again, with the limit headers it had: a replay is that answer, counted nothing.
        for (const [name, value] of Object.entries(guard.answer.headers ?? {})) reply.header(name, value);
        return reply.code(guard.answer.status).header('Idempotent-Replayed', 'true').type('application/json; charset=utf-8').send(guard.answer.body);
      }
    }
    const items = parsed as BatchItem[];
    const first = guard?.kind === 'first' ? guard : null;
    try {
      const lookups = items.filter((item) => item.kind !== 'invalid').length;
      const counted = await countBatch(deps, request, reply, key, lookups, now);
      const run = await runBatch(deps, items, counted.granted, counted.refused, keyMode(key)!, (err) => request.log.error({ err }, 'batch item failed'));
      // 502 items consume nothing (decisions.md): give their lookups back.
      for (let i = 0; i < run.refunds; i++) await deps.access.refund(counted.ticket);
      reply.header('X-Lookups-Remaining', counted.remaining.period + run.refunds);
      const body = batchBody(run.results);
      await first?.complete({ status: 200, body: body.toString('utf8'), headers: replayedHeaders(reply) }, deps.clock());
      return reply.type('application/json; charset=utf-8').send(body);
    } catch (err) {
      // No answer was kept: a retry with the key runs the batch (the refusals consumed nothing).
      await first?.release();
      throw err;
    }
  };

  // Parse errors are kept for the handler, so the key is checked before the body is refused.
  app.register(async (scope) => {
    deferJsonErrors(scope);
    scope.post('/v1/track/batch', api({
      operationId: 'trackBatch', summary: 'Track 1 to 100 shipments in one request', caller: 'key', limits: 'metered',
      description: 'One result per item, in input order, each with its index. '
        + 'Each item is metered as a single lookup would be (200 and 404 consume; 400, 429 and 502 do not); '
        + 'items past the daily or period quota get that quota\'s 429 code while the ones before it are served. The batch is one request for the burst limit. '
        + 'Items without a carrier are detected as GET /v1/track/{awb} does. Identical items share one carrier poll.',
      headers: IdempotencyHeaders,
      body: BatchRequestSchema,
      bodyExample: { items: [{ carrier: 'delhivery', awb: '1234567890102' }, { awb: '12345670104' }] },
      responses: { 200: { description: 'One result per item', schema: BatchAnswerSchema, optionalHeaders: ['Idempotent-Replayed'] } },
      errors: ['conflict', 'idempotency_key_reused'],
    }), handler);
  });
  methodNotAllowed(app, '/v1/track/batch', ['POST']);
}
