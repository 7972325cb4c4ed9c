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

/**
 * memoize for a function of three texts (or nulls), e.g. a scan's code, status and remarks: nested
 * maps keyed by the texts themselves, rather than one key concatenated (allocated and hashed anew)
 * for every call. Bounded like memoize: all dropped once `limit` results are held.
 */
export function memoizeTexts3<T>(
  fn: (a: string | null, b: string | null, c: string | null) => T,
  limit = 20_000,
): (a: string | null, b: string | null, c: string | null) => T {
  let cache = new Map<string | null, Map<string | null, Map<string | null, T>>>();
  let size = 0;
  return (a, b, c) => {
    let byB = cache.get(a);
    let byC = byB?.get(b);
    let value = byC?.get(c);
    if (value === undefined) {
      if (size >= limit) {
        cache = new Map();
        size = 0;
        byB = undefined;
        byC = undefined;
      }
      value = fn(a, b, c);
      if (!byB) cache.set(a, (byB = new Map()));
      if (!byC) byB.set(b, (byC = new Map()));
      byC.set(c, value);
      size++;
    }
    return value;
  };
}
