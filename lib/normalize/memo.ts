/**
 * Memoises a pure function of a string or number. Carrier feeds repeat the same few dozen labels,
 * locations and remarks millions of times (and their times fall on few days), so computing each
 * distinct value once is most of normalization's speed. The cache is dropped whole when full:
 * simple, bounded, and still ~100% hits in practice.
 */
export function memoize<K extends string | number, T>(fn: (key: K) => T, limit = 20_000): (key: K) => T {
  let cache = new Map<K, T>();
  return (key: K) => {
    let value = cache.get(key);
    if (value === undefined) {
      if (cache.size >= limit) cache = new Map();
      value = fn(key);
      cache.set(key, value);
    }
    return value;
  };
}

/** memoize for text: folding, cleaning and redaction of carrier labels. */
export function memoizeText<T>(fn: (text: string) => T, limit = 20_000): (text: string) => T {
  return memoize(fn, limit);
}
