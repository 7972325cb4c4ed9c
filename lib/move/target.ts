import { isCluster, type RedisClient } from '../redis/index.ts';

/** The move's own keys under the namespace: what it has done, so a second run does not redo it. */
export function moveKeys(namespace: string): { done: string; pollsSent: string } {
  return { done: `${namespace}move:done`, pollsSent: `${namespace}move:polls-sent` };
}

/**
 * A key under `namespace` other than the move's own, or null when there is none: the target is
 * empty. On a cluster every master is asked (SCAN sees one node only).
 */
export async function firstKeyUnder(redis: RedisClient, namespace: string): Promise<string | null> {
  const own = new Set(Object.values(moveKeys(namespace)));
  // The access store writes its layout version before its first command: not data.
  own.add(`${namespace}access:layout`);
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, names] = await node.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
      const found = names.find((name) => !own.has(name));
      if (found) return found;
      cursor = next;
    } while (cursor !== '0');
  }
  return null;
}
