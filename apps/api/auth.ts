import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { effectiveStatus, hashKey, isWellFormedKey, type AccessStore, type KeyRecord } from '../../lib/access/index.ts';
import { ApiError } from './errors.ts';

/**
 * The caller's key record: 401 `missing_api_key` without the header; 401 `invalid_api_key` for a
 * malformed, unknown, suspended or revoked key. Expiry is left to the caller (usage still answers).
 */
export async function authenticate(request: FastifyRequest, access: AccessStore, now: Date): Promise<KeyRecord> {
  const header = request.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') throw new ApiError('missing_api_key', 'Send your API key in the X-API-Key header.');
  if (!isWellFormedKey(key)) throw new ApiError('invalid_api_key', 'The API key is malformed: expected trk_live_ or trk_test_ followed by 32 letters and digits.');
  const record = await access.getByKey(key);
  if (!record || record.hash !== hashKey(key)) throw new ApiError('invalid_api_key', 'The API key is not valid.');
  const status = effectiveStatus(record, now);
  if (status === 'suspended') throw new ApiError('invalid_api_key', 'The API key is suspended. Contact support.');
  if (status === 'revoked') throw new ApiError('invalid_api_key', 'The API key has been revoked.');
  request.keyPrefix = record.prefix;
  // Every later log line of this request names the key, by its prefix only. The request's logger is
  // already a child of its own (pino): adding the binding to it costs far less than a new child.
  const log = request.log as FastifyBaseLogger & { setBindings?: (bindings: Record<string, string>) => void };
  if (log.setBindings) log.setBindings({ key_prefix: record.prefix });
  else request.log = request.log.child({ key_prefix: record.prefix });
  return record;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Prefix of the authenticated key: the only form in which a key reaches the logs. */
    keyPrefix?: string;
  }
}
