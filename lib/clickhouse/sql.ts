/**
 * SQL text helpers for the few queries that interpolate values. ClickHouse 18.16 has no query
 * parameters ({name:Type}), so every value that reaches SQL text goes through one of these: strings
 * are escaped, everything else is strictly validated. Writes never use them (JSONEachRow inserts).
 */

const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};
const NEEDS_ESCAPE = /[\\'\0\b\f\n\r\t]/g;
/** A UTF-16 surrogate without its partner cannot be encoded as UTF-8, so it could not round-trip. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A single-quoted ClickHouse string literal holding exactly `value` (backslash escapes, as every release reads them). */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new TypeError(`sqlString expects a string, got ${typeof value}`);
  if (LONE_SURROGATE.test(value)) throw new TypeError('sqlString: the string holds a lone UTF-16 surrogate');
  return `'${value.replace(NEEDS_ESCAPE, (c) => ESCAPES[c]!)}'`;
}

/** A database, table or column name: only [A-Za-z_][A-Za-z0-9_]* is accepted, returned back-quoted. */
export function sqlIdentifier(name: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name) || name.length > 200) {
    throw new TypeError(`not a safe ClickHouse identifier: ${JSON.stringify(name)}`);
  }
  return `\`${name}\``;
}

/** A safe integer as SQL text. */
export function sqlInt(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`);
  return String(value);
}

/** `('a', 'b')` for `x IN (...)`; callers never pass an empty list (`IN ()` is a syntax error). */
export function sqlStringList(values: readonly string[]): string {
  if (values.length === 0) throw new TypeError('sqlStringList: empty list');
  return `(${values.map(sqlString).join(', ')})`;
}

/** `(('c', 'a'), ...)` for `(carrier, awb) IN (...)`, which uses the tables' primary key. */
export function sqlPairList(pairs: readonly (readonly [string, string])[]): string {
  if (pairs.length === 0) throw new TypeError('sqlPairList: empty list');
  return `(${pairs.map(([a, b]) => `(${sqlString(a)}, ${sqlString(b)})`).join(', ')})`;
}

/** A DateTime('UTC') value from epoch milliseconds (whole seconds: 18.16 has no DateTime64). */
export function sqlDateTime(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > 0xffffffff) {
    throw new TypeError(`not a DateTime-range instant: ${ms}`);
  }
  return `toDateTime(${seconds}, 'UTC')`;
}
