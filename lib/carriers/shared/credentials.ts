/** Carrier credentials from configuration. */
import type { CarrierEndpoint } from '../types.ts';

/** The endpoint's credential `name`; throws (before any call is made) when it is not configured. */
export function requireCredential(slug: string, endpoint: CarrierEndpoint, name: string): string {
  const value = endpoint.credentials[name];
  if (!value) throw new Error(`${slug}: credential "${name}" is not configured`);
  return value;
}
