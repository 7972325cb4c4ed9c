import type { RedisClient } from './connect.ts';
import { isCluster } from './connect.ts';

/** A Lua script called with any number of keys and one argument per key: `call(keys, argv)`. */
export type KeyedScript<T> = (keys: readonly string[], argv: readonly string[]) => Promise<T[]>;

type Callable<T> = Record<string, (...args: (string | number)[]) => Promise<T[]>>;

/** Key counts a cluster call is padded to (the largest also bounds one call). */
const CLUSTER_SIZES = [1, 2, 4, 8, 16, 32, 64] as const;

/**
 * Defines `lua`, a script taking any number of keys with one ARGV per key (ARGV[i] goes with
 * KEYS[i]) and returning one reply per key. One server: one command, the key count sent first.
 *
 * A cluster client needs more care (ioredis 6): it auto-pipelines a call to the node of its first
 * argument, which for such a command is the key count, not a key (the pipeline then fails with
 * "All keys in the pipeline should belong to the same slots allocation group"); and a command
 * defined after a pipeline was made is missing from that pipeline (defining one per count on first
 * use crashed the client under load). So on a cluster a few commands with a fixed key count are
 * defined at once (1, 2, 4 … 64 keys, the same script, which Redis holds once); a call is cut into
 * calls of at most 64 keys, each padded to the next of those counts by repeating its last key and
 * argument (same slot; the extra replies are dropped). `name` itself keeps the one-server
 * signature (count first) on both, so callers and tests see one command.
 */
export function defineKeyedScript<T>(redis: RedisClient, name: string, lua: string): KeyedScript<T> {
  const callable = redis as unknown as Callable<T>;
  if (!isCluster(redis)) {
    redis.defineCommand(name, { lua });
  } else {
    for (const size of CLUSTER_SIZES) redis.defineCommand(`${name}Keys${size}`, { numberOfKeys: size, lua });
    const largest = CLUSTER_SIZES[CLUSTER_SIZES.length - 1]!;
    callable[name] = async (count, ...keysThenArgv) => {
      const n = Number(count);
      const keys = keysThenArgv.slice(0, n);
      const argv = keysThenArgv.slice(n);
      const calls: Promise<T[]>[] = [];
      for (let from = 0; from < n; from += largest) {
        const chunkKeys = keys.slice(from, from + largest);
        const chunkArgv = argv.slice(from, from + largest);
        const size = CLUSTER_SIZES.find((s) => s >= chunkKeys.length)!;
        while (chunkKeys.length < size) {
          chunkKeys.push(chunkKeys[chunkKeys.length - 1]!);
          chunkArgv.push(chunkArgv[chunkArgv.length - 1]!);
        }
        const real = Math.min(largest, n - from);
        calls.push(callable[`${name}Keys${size}`]!(...chunkKeys, ...chunkArgv).then((replies) => replies.slice(0, real)));
      }
      return (await Promise.all(calls)).flat();
    };
  }
  return (keys, argv) => callable[name]!(keys.length, ...keys, ...argv);
}
