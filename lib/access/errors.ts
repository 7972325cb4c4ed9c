import type { ErrorCode } from '../schemas/index.ts';

export type AccessErrorReason = 'key_not_found' | 'key_revoked' | 'trial_exists' | 'invalid_input';

const STATUS_CODE: Record<AccessErrorReason, Extract<ErrorCode, 'not_found' | 'conflict' | 'bad_request'>> = {
  key_not_found: 'not_found',
  key_revoked: 'conflict',
  trial_exists: 'conflict',
  invalid_input: 'bad_request',
};

/**
 * A refused admin operation. `code` is the API error code the admin routes answer with, so the
 * root error handler needs no knowledge of this module; `reason` says which rule refused.
 */
export class AccessError extends Error {
  override name = 'AccessError';
  readonly code: Extract<ErrorCode, 'not_found' | 'conflict' | 'bad_request'>;

  readonly reason: AccessErrorReason;
  constructor(reason: AccessErrorReason, message: string) {
    super(message);
    this.reason = reason;
    this.code = STATUS_CODE[reason];
  }
}

export function keyNotFound(prefix: string): AccessError {
  return new AccessError('key_not_found', `No API key with prefix ${prefix}.`);
}
