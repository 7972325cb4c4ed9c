/**
 * The trial key `npm start` prints: made at the first start on a store and shown whole then only
 * (the store keeps its hash, never the key); later starts find it by its e-mail and show its prefix.
 */
import type { AccessStore, KeyRecord } from '../../lib/access/index.ts';

export const QUICKSTART_EMAIL = 'quickstart@example.com';

export interface QuickstartKey {
  /** The whole key when this start made it; null when an earlier start did. */
  key: string | null;
  record: KeyRecord;
}

export async function quickstartKey(access: AccessStore, now: Date): Promise<QuickstartKey> {
  const made = await access.findTrialByEmail(QUICKSTART_EMAIL);
  if (made) return { key: null, record: made };
  const { key, record } = await access.createKey({ plan: 'trial', mode: 'test', email: QUICKSTART_EMAIL }, now);
  return { key, record };
}
