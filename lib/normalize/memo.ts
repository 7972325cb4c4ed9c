/**
 * Memoises a pure string function. Carrier feeds repeat the same few dozen labels, locations and
 * remarks millions of times, so folding/cleaning each distinct text once is most of normalization's
 * speed. The cache is dropped whole when full: simple, bounded, and still ~100% hits in practice.
 */
export function memoizeText<T>(fn: (text: string) => T, limit = 20_000): (text: string) => T {
  let cache = new Map<string, T>();
  return (text: string) => {
    let value = cache.get(text);
    if (value === undefined) {
      if (cache.size >= limit) cache = new Map();
      value = fn(text);
      cache.set(text, value);
    }
    return value;
  };
}
