import { ownString } from './own-string.ts';

/**
 * One number per shipment (`mode:carrier:AWB`), 0, 1, 2… in the order first seen, shared by the
 * embedded pipeline's shipment index and the books that keep a row per shipment (lanes,
 * delivered shipments). Each book keyed its rows by a string of its own: three maps and three
 * copies of the same keys, ~75 MiB of a million-poll restart's heap (benchmarks.md). With one
 * numbering the key strings and their map are held once, a book's row is found through a typed
 * column indexed by the number, and a checkpoint stores the books' rows as numbers.
 *
 * Modes and carrier slugs hold no ':', so the AWB is what follows the second one.
 */
export class ShipmentNumbers {
  private readonly numberOfKey = new Map<string, number>();
  private readonly keys: string[] = [];

  static keyOf(mode: string, carrier: string, awb: string): string {
    return `${mode}:${carrier}:${awb}`;
  }

  /** The number of `key`, given a new one when first seen. */
  numberOfKeyed(key: string): number {
    const known = this.numberOfKey.get(key);
    if (known !== undefined) return known;
    const number = this.keys.length;
    // Its own flat copy: the key is built from a poll's AWB, which may be a slice of the poll's body.
    const own = ownString(key);
    this.keys.push(own);
    this.numberOfKey.set(own, number);
    return number;
  }

  numberOf(mode: string, carrier: string, awb: string): number {
    return this.numberOfKeyed(ShipmentNumbers.keyOf(mode, carrier, awb));
  }

  /** The shipment's key (`mode:carrier:AWB`). */
  key(number: number): string {
    const key = this.keys[number];
    if (key === undefined) throw new RangeError(`no shipment numbered ${number}`);
    return key;
  }

  awb(number: number): string {
    const key = this.key(number);
    return key.slice(key.indexOf(':', key.indexOf(':') + 1) + 1);
  }

  get size(): number {
    return this.keys.length;
  }

  /** The keys in number order (a checkpoint keeps them; `importKeys` takes them back). */
  exportKeys(): string[] {
    return [...this.keys];
  }

  /** Takes back exported keys into this (empty) numbering: key i is numbered i again. */
  importKeys(keys: readonly string[]): void {
    if (this.keys.length > 0) throw new Error('shipment numbers: import into an empty numbering only');
    for (const key of keys) {
      if (this.numberOfKey.has(key)) throw new Error(`shipment numbers: ${key} twice`);
      // A checkpoint's strings are decoded ones of their own: no copy.
      this.numberOfKey.set(key, this.keys.length);
      this.keys.push(key);
    }
  }
}
