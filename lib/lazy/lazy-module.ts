/**
 * A package loaded at its first use instead of at start. The embedded default never talks to Kafka,
 * Redis or ClickHouse, yet importing their clients (kafkajs alone is ~140 modules) cost every start
 * its load time and ~11 MiB of resident memory. The packages are CommonJS, so `require` gives the
 * same exports an `import` would, synchronously, and the callers keep their types with `import type`.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `load()` requires `specifier` the first time it is called and hands the same exports after. */
export function lazyModule<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(specifier) as T);
}
