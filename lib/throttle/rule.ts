/**
 * Attempts per client address in a sliding window, kept where the keys are (Redis, or a file under
 * DATA_DIR), so a restart does not hand every address a fresh allowance. The self-serve trial page
 * counts the keys it issued to an address; the admin API counts wrong tokens.
 */
export interface ThrottleRule {
  /** Names the counter, e.g. `trial` or `admin-token`. */
  name: string;
  /** Attempts an address may make inside `windowMs`. */
  limit: number;
  windowMs: number;
}

/** `blocked: false`, or the seconds until the oldest counted attempt leaves the window. */
export type ThrottleState = { blocked: false } | { blocked: true; retryAfterSeconds: number };

export interface AddressThrottle {
  /** Whether `address` has used up `rule` at `now` (counts nothing). */
  check(rule: ThrottleRule, address: string, now: number): Promise<ThrottleState>;
  /** Counts one attempt of `address` at `now`. */
  record(rule: ThrottleRule, address: string, now: number): Promise<void>;
  close(): Promise<void>;
}

/** The state of an address from the times of its attempts (any order, old ones included). */
export function stateOf(rule: ThrottleRule, times: readonly number[], now: number): ThrottleState {
  const recent = times.filter((at) => now - at < rule.windowMs).sort((a, b) => a - b);
  if (recent.length < rule.limit) return { blocked: false };
  // The attempt that frees a slot is the one `limit` places before the end.
  const freeing = recent[recent.length - rule.limit]!;
  return { blocked: true, retryAfterSeconds: Math.max(1, Math.ceil((freeing + rule.windowMs - now) / 1000)) };
}
