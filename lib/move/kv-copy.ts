import type { Kv, KvDump } from '../kv/index.ts';

export interface KvCopied {
  documents: number;
  sets: number;
  schedules: number;
  lists: number;
}

/**
 * Writes an embedded Kv's dump into another Kv through its interface, as it was: documents with
 * what is left of their time to live, set members, schedule members at their due times, lists in
 * their order (replaced, not appended to). Every write sets a value, so copying twice leaves the
 * same state as copying once.
 */
export async function copyKv(dump: KvDump, target: Kv, nowMs: number): Promise<KvCopied> {
  const copied: KvCopied = { documents: 0, sets: 0, schedules: 0, lists: 0 };
  for (const [key, value, expiresAt] of dump.docs) {
    if (expiresAt !== null && expiresAt <= nowMs) continue;
    await target.set(key, value, expiresAt === null ? undefined : expiresAt - nowMs);
    copied.documents++;
  }
  for (const [key, members] of dump.sets) {
    for (const member of members) await target.setAdd(key, member);
    copied.sets++;
  }
  for (const [key, entries] of dump.zsets) {
    for (const [member, atMs] of entries) await target.schedule(key, member, atMs);
    copied.schedules++;
  }
  for (const [key, items] of dump.lists) {
    await target.delete(key);
    // Newest first in the dump: pushed oldest first, so the newest ends up first again.
    for (const item of [...items].reverse()) await target.listPush(key, item, items.length);
    copied.lists++;
  }
  return copied;
}
