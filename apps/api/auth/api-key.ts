import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { isWellFormedKey, standingOf, type AccessStore, type KeyRecord } from '../../../lib/access/index.ts';
import { ApiError } from '../http/errors.ts';

/** The X-API-Key header: 401 `missing_api_key` without it, 401 `invalid_api_key` when malformed. */
export function presentedKey(request: FastifyRequest): string {
  const header = request.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') throw new ApiError('missing_api_key', 'Send your API key in the X-API-Key header.');
  if (!isWellFormedKey(key)) {
    throw new ApiError('invalid_api_key', 'The API key is malformed: expected trk_live_ or trk_test_ followed by 32 letters and digits.');
  }
  return key;
}

/**
 * The one place that decides whether the presented key may act now, for every `/v1/` route (the
 * background workers ask lib/access `standingOf` too): 401 `invalid_api_key` for an unknown,
 * suspended or revoked key; 402 `payment_required` outside the plan period, except for
 * `GET /v1/usage` (`pastPeriodAllowed`), which still answers (decisions.md). Names the key in the logs.
 */
export function acceptKeyRecord(request: FastifyRequest, record: KeyRecord | null, now: Date, options: { pastPeriodAllowed?: boolean } = {}): KeyRecord {
  // The store finds the record by the key's hash: a record found is the key's own.
  const standing = standingOf(record, now);
  if (!record || standing === 'unknown') throw new ApiError('invalid_api_key', 'The API key is not valid.');
  if (standing === 'suspended') throw new ApiError('invalid_api_key', 'The API key is suspended. Contact support.');
  if (standing === 'revoked') throw new ApiError('invalid_api_key', 'The API key has been revoked.');
  if (!options.pastPeriodAllowed) {
    if (standing === 'expired') throw new ApiError('payment_required', `The plan period ended at ${record.period_end}. Renew to restore access at once.`);
    if (standing === 'not_started') {
      throw new ApiError('payment_required', `The plan period starts at ${record.period_start}; lookups are possible from then on.`);
    }
  }
  request.keyPrefix = record.prefix;
  // Every later log line of this request names the key, by its prefix only. The request's logger is
  // already a child of its own (pino): adding the binding to it costs far less than a new child.
  const log = request.log as FastifyBaseLogger & { setBindings?: (bindings: Record<string, string>) => void };
  if (log.setBindings) log.setBindings({ key_prefix: record.prefix });
  else request.log = request.log.child({ key_prefix: record.prefix });
  return record;
}

/** The caller's key record (the two steps above with a read of the store between). */
export async function authenticate(request: FastifyRequest, access: AccessStore, now: Date, options: { pastPeriodAllowed?: boolean } = {}): Promise<KeyRecord> {
  const key = presentedKey(request);
  return acceptKeyRecord(request, await access.getByKey(key), now, options);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Prefix of the authenticated key: the only form in which a key reaches the logs. */
    keyPrefix?: string;
  }
}
