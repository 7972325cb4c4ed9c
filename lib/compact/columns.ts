/** A typed column of a book held in columns (lanes, delivered shipments, a rebuild's counts). */
export type Column = Int32Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | Uint16Array<ArrayBuffer> | Uint8Array<ArrayBuffer> | Float64Array<ArrayBuffer>;

/**
 * `column`, or a copy of it of the same type with room for at least `needed` values: the length
 * doubles, so appending one value at a time costs O(1) amortised.
 */
export function withRoom<T extends Column>(column: T, needed: number): T {
  if (needed <= column.length) return column;
  const next = new (column.constructor as new (length: number) => T)(Math.max(needed, 2 * column.length));
  next.set(column);
  return next;
}
