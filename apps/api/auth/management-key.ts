import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRecord } from '../../../lib/access/index.ts';
import type { Kv } from '../../../lib/kv/index.ts';
import { acceptKeyRecord, presentedKey } from './api-key.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError } from '../http/errors.ts';

/** What these functions use of the API's dependencies. */
export type ManagementDeps = Pick<ApiDeps, 'access' | 'clock'>;

/**
 * The key of a push management call (webhooks, watch lists). These consume no lookups; they are
 * held to the key's burst limit per second in a window of their own, so they never take a lookup's
 * place (lookups keep their exact metering) and cannot be used to flood the service either.
 */
export async function managementKey(deps: ManagementDeps, kv: Kv, request: FastifyRequest, reply: FastifyReply): Promise<KeyRecord> {
  const now = deps.clock();
  const key = presentedKey(request);
  const { record: stored } = await deps.access.authorize(key, new Date(now), false);
  const record = acceptKeyRecord(request, stored, new Date(now));
  const second = Math.floor(now / 1000);
  // One atomic increment: hundreds of concurrent calls of one key never conflict (an update did, with Redis).
  const used = await kv.increment(`burst:{${record.prefix}}:${second}`, 2_000);
  reply.header('RateLimit-Limit', record.burst_per_second);
  reply.header('RateLimit-Remaining', Math.max(0, record.burst_per_second - used));
  reply.header('RateLimit-Reset', 1);
  if (used > record.burst_per_second) {
    throw new ApiError(
      'rate_limit_exceeded',
      `More than ${record.burst_per_second} requests in one second. Back off with a small random delay.`,
      { 'Retry-After': 1 },
    );
  }
  return record;
}
