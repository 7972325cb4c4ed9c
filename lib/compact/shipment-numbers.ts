import { withRoom } from './columns.ts';

/**
 * One number per shipment (`mode:carrier:AWB`), 0, 1, 2… in the order first seen, shared by the
 * embedded pipeline's shipment index and the books that keep a row per shipment (lanes,
 * delivered shipments). Each book keyed its rows by a string of its own: three maps and three
 * copies of the same keys, ~75 MiB of a million-poll restart's heap (benchmarks.md). With one
 * numbering a book's row is found through a typed column indexed by the number, and a checkpoint
 * stores the books' rows as numbers.
 *
 * The keys themselves are held as UTF-8 bytes in one buffer, found through an open-addressing
 * table of numbers: a Map of strings cost ~100 bytes a key (a string object each, and the Map's
 * table at a power-of-two capacity), this ~50 (the bytes, an end offset, a hash and the table at
 * most half full), and a checkpoint loads the keys as two arrays instead of a string each.
 *
 * Modes and carrier slugs hold no ':', so the AWB is what follows the second one.
 */
export class ShipmentNumbers {
  /** The keys' UTF-8 bytes, one after another; `ends[n]`: where key n ends (it starts where n - 1 ends). */
  private bytes = Buffer.alloc(64 * 1024);
  private used = 0;
  private ends = new Uint32Array(1024);
  private hashes = new Uint32Array(1024);
  private count = 0;
  /** Open addressing, linear probing: number + 1 per slot, 0 empty; never more than half full. */
  private table = new Int32Array(2048);
  /** The key being looked up, encoded. */
  private scratch = Buffer.alloc(256);

  static keyOf(mode: string, carrier: string, awb: string): string {
    return `${mode}:${carrier}:${awb}`;
  }

  numberOf(mode: string, carrier: string, awb: string): number {
    return this.numberOfKeyed(ShipmentNumbers.keyOf(mode, carrier, awb));
  }

  /** The number of `key`, given a new one when first seen. */
  numberOfKeyed(key: string): number {
    if (this.scratch.length < key.length * 3) this.scratch = Buffer.alloc(key.length * 3);
    const length = this.scratch.write(key, 0, 'utf8');
    const hash = fnv1a(this.scratch, 0, length);
    const mask = this.table.length - 1;
    let at = hash & mask;
    for (let entry = this.table[at]!; entry !== 0; entry = this.table[at]!) {
      const number = entry - 1;
      if (this.hashes[number] === hash && this.holds(number, length)) return number;
      at = (at + 1) & mask;
    }
    const number = this.append(this.scratch, 0, length, hash);
    this.table[at] = number + 1;
    if (this.count * 2 > this.table.length) this.rehash(this.table.length * 2);
    return number;
  }

  /** Whether key `number` is the `length` bytes in `scratch`. */
  private holds(number: number, length: number): boolean {
    const start = number === 0 ? 0 : this.ends[number - 1]!;
    if (this.ends[number]! - start !== length) return false;
    for (let i = 0; i < length; i++) if (this.bytes[start + i] !== this.scratch[i]) return false;
    return true;
  }

  /** Appends a key's bytes as the next number (not yet in the table). */
  private append(from: Uint8Array, start: number, length: number, hash: number): number {
    if (this.used + length > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(this.used + length, Math.ceil(this.bytes.length * 1.5)));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    this.bytes.set(from.subarray(start, start + length), this.used);
    this.used += length;
    const number = this.count++;
    this.ends = withRoom(this.ends, this.count);
    this.hashes = withRoom(this.hashes, this.count);
    this.ends[number] = this.used;
    this.hashes[number] = hash;
    return number;
  }

  /** A new table of `capacity` slots (a power of two) with every number; `unique`: refuses a key held twice. */
  private rehash(capacity: number, unique = false): void {
    const table = new Int32Array(capacity);
    const mask = capacity - 1;
    for (let number = 0; number < this.count; number++) {
      let at = this.hashes[number]! & mask;
      for (let entry = table[at]!; entry !== 0; entry = table[at]!) {
        if (unique && this.hashes[entry - 1] === this.hashes[number] && this.same(entry - 1, number)) {
          throw new Error(`shipment numbers: ${this.key(number)} twice`);
        }
        at = (at + 1) & mask;
      }
      table[at] = number + 1;
    }
    this.table = table;
  }

  /** Whether keys `a` and `b` are the same bytes. */
  private same(a: number, b: number): boolean {
    const startA = a === 0 ? 0 : this.ends[a - 1]!;
    const startB = b === 0 ? 0 : this.ends[b - 1]!;
    return this.bytes.compare(this.bytes, startB, this.ends[b]!, startA, this.ends[a]!) === 0;
  }

  /** The shipment's key (`mode:carrier:AWB`), decoded afresh at each call. */
  key(number: number): string {
    if (!Number.isInteger(number) || number < 0 || number >= this.count) throw new RangeError(`no shipment numbered ${number}`);
    return this.bytes.toString('utf8', number === 0 ? 0 : this.ends[number - 1]!, this.ends[number]!);
  }

  awb(number: number): string {
    const key = this.key(number);
    return key.slice(key.indexOf(':', key.indexOf(':') + 1) + 1);
  }

  get size(): number {
    return this.count;
  }

  /** The keys in number order, as a checkpoint keeps them (copies). */
  exportState(): ShipmentNumbersState {
    return { bytes: new Uint8Array(this.bytes.subarray(0, this.used)), ends: this.ends.slice(0, this.count) };
  }

  /** Takes back an exported state into this (empty) numbering: key n is numbered n again. */
  importState(state: ShipmentNumbersState): void {
    if (this.count > 0) throw new Error('shipment numbers: import into an empty numbering only');
    const { bytes, ends } = state;
    if (ends.length > 0 && ends[ends.length - 1] !== bytes.length) throw new Error('shipment numbers: the keys\' ends and bytes differ in length');
    this.bytes = Buffer.alloc(Math.max(bytes.length, 1024));
    this.bytes.set(bytes);
    this.used = bytes.length;
    this.ends = new Uint32Array(Math.max(ends.length, 1024));
    this.ends.set(ends);
    this.hashes = new Uint32Array(this.ends.length);
    for (let number = 0, start = 0; number < ends.length; start = ends[number++]!) {
      if (ends[number]! < start) throw new Error('shipment numbers: the keys\' ends go backwards');
      this.hashes[number] = fnv1a(this.bytes, start, ends[number]!);
    }
    this.count = ends.length;
    // A key twice would be found under its first number only: such a state is not one this class wrote.
    this.rehash(Math.max(2048, 2 ** Math.ceil(Math.log2(this.count * 2 + 1))), true);
  }
}

/** The numbering as a checkpoint holds it: every key's UTF-8 bytes in number order, and where each ends. */
export interface ShipmentNumbersState {
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** FNV-1a, 32 bits, over `bytes[start, end)`. */
function fnv1a(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}
