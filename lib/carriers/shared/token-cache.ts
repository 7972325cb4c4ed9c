/** Login tokens of the carriers that issue them, kept between lookups. */
import type { NativeResponse } from '../types.ts';

/** A login's token (with its expiry when the carrier says), or the failing answer to hand back as the poll's answer. */
export type LoginResult = { token: string; expiresAtMs?: number } | { failed: NativeResponse };

/**
 * Tokens by key (base URL and user): one login serves many lookups until the token expires or the
 * carrier rejects it with a 401, which logs in again once.
 */
export class TokenCache {
  private readonly tokens = new Map<string, { token: string; expiresAtMs: number }>();

  private readonly now: () => number;
  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  async send(key: string, login: () => Promise<LoginResult>, track: (token: string) => Promise<NativeResponse>): Promise<NativeResponse> {
    const cached = this.tokens.get(key);
    if (cached !== undefined && cached.expiresAtMs > this.now()) {
      const response = await track(cached.token);
      if (response.status !== 401) return response;
      // The carrier dropped a token we still held: log in again, once.
      this.tokens.delete(key);
    }
    const result = await login();
    if ('failed' in result) return result.failed;
    this.tokens.set(key, { token: result.token, expiresAtMs: result.expiresAtMs ?? Infinity });
    return track(result.token);
  }
}
