import { isCluster, type RedisClient } from '../redis/index.ts';

/**
 * Version 2: a key's record and usage carry its hash as a Redis Cluster hash tag
 * (`key:{<sha256>}`, `usage:{<sha256>}`). Version 1 (no `layout` key) named them `key:<sha256>`
 * and `usage:<sha256>`, and ran on one Redis only (the apps refused a cluster).
 */
export const ACCESS_LAYOUT_VERSION = '2';

/** Version 1 names: the prefix, then a bare 64-hex hash (a tagged name has `{` there). */
const LEGACY = /^(key|usage):([0-9a-f]{64})$/;

/**
 * Brings the access keys under `namespace` to the current layout, once: the Redis access store
 * calls it before its first command. With the `layout` key already current it
 * costs one GET. Otherwise it renames each version 1 record and usage hash to its tagged name
 * (RENAMENX: atomic, and never over a newer key) and then writes the version. Several instances
 * starting together are safe: a name another one renamed first is simply gone.
 *
 * Instances of the previous release must be stopped first: they would go on writing counts under
 * the old names. On a cluster there is nothing to rename (version 1 never ran on one; a rename
 * across slots would be refused anyway), so only the version is written.
 */
export async function upgradeAccessLayout(redis: RedisClient, namespace: string): Promise<{ renamed: number }> {
  const versionKey = `${namespace}layout`;
  if ((await redis.get(versionKey)) === ACCESS_LAYOUT_VERSION) return { renamed: 0 };
  let renamed = 0;
  if (!isCluster(redis)) {
    let cursor = '0';
    do {
      const [next, names] = await redis.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
      cursor = next;
      for (const name of names) {
        const legacy = LEGACY.exec(name.slice(namespace.length));
        if (!legacy || !name.startsWith(namespace)) continue;
        try {
          renamed += await redis.renamenx(name, `${namespace}${legacy[1]}:{${legacy[2]}}`);
        } catch (err) {
          // Renamed by another instance since the SCAN.
          if (!/no such key/i.test((err as Error).message)) throw err;
        }
      }
    } while (cursor !== '0');
  }
  await redis.set(versionKey, ACCESS_LAYOUT_VERSION);
  return { renamed };
}
