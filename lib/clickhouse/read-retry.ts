import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import { isRetryableClickHouseError } from './client.ts';

/**
 * Retries a read (or a small idempotent write) on transient failures: a keep-alive socket the
 * server closed while the caller was busy ("socket hang up"), a timeout, a refused connection.
 * Long replays make thousands of queries; one reset must not end a run.
 */
const policy = retry(handleWhen(isRetryableClickHouseError), {
  maxAttempts: 5,
  backoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 5_000 }),
});

export function withReadRetry<T>(run: () => Promise<T>): Promise<T> {
  return policy.execute(run);
}
