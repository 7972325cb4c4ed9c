import { withRoom } from './columns.ts';

/**
 * One number per shipment (`mode:carrier:AWB`), 0, 1, 2… in the order first seen, shared by the
 * embedded pipeline's shipment index and the books that keep a row per shipment (lanes,
 * delivered shipments). Each book keyed its rows by a string of its own: three maps and three
 * copies of the same keys, ~75 MiB of a million-poll restart's heap (benchmarks.md). With one
 * numbering a book's row is found through a typed column indexed by the number, and a checkpoint
 * stores the books' rows as numbers.
 *
 * The keys themselves are held as bytes in one buffer, found through an open-addressing table of
 * numbers: a Map of strings cost ~100 bytes a key (a string object each, and the Map's table at a
 * power-of-two capacity), this ~35 (the bytes, an end offset, a hash and the table at most three
 * quarters full), and a checkpoint loads the keys as a few arrays instead of a string each. A key's
 * bytes are its `mode:carrier:` prefix as a two-byte number (a handful of prefixes, each written
 * once in `prefixes`) and its AWB's UTF-8: the prefix spelled out in every key was ~40 % of them.
 *
 * Modes and carrier slugs hold no ':', so the AWB is what follows the second one.
 */
export class ShipmentNumbers {
  /** The keys' bytes, one after another; `ends[n]`: where key n ends (it starts where n - 1 ends). */
  private bytes = Buffer.alloc(64 * 1024);
  private used = 0;
  private ends = new Uint32Array(1024);
  private hashes = new Uint32Array(1024);
  private count = 0;
  /** Open addressing, linear probing: number + 1 per slot, 0 empty; never more than three quarters full. */
  private table = new Int32Array(2048);
  /** The key being looked up, encoded. */
  private scratch = Buffer.alloc(256);
  /** Each `mode:carrier:` prefix, by its number (a key's first two bytes). */
  private prefixes: string[] = [];
  private readonly prefixIds = new Map<string, number>();

  static keyOf(mode: string, carrier: string, awb: string): string {
    return `${mode}:${carrier}:${awb}`;
  }

  numberOf(mode: string, carrier: string, awb: string): number {
    return this.numberOfParts(`${mode}:${carrier}:`, awb);
  }

  /** The number of `key` (`mode:carrier:AWB`), given a new one when first seen. */
  numberOfKeyed(key: string): number {
    const cut = key.indexOf(':', key.indexOf(':') + 1) + 1;
    return this.numberOfParts(key.slice(0, cut), key.slice(cut));
  }

  private numberOfParts(prefix: string, awb: string): number {
    if (this.scratch.length < 2 + awb.length * 3) this.scratch = Buffer.alloc(2 + awb.length * 3);
    this.scratch.writeUInt16LE(this.prefixIdOf(prefix), 0);
    const length = 2 + this.scratch.write(awb, 2, 'utf8');
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
    if (this.count * 4 > this.table.length * 3) this.rehash(this.table.length * 2);
    return number;
  }

  private prefixIdOf(prefix: string): number {
    let id = this.prefixIds.get(prefix);
    if (id === undefined) {
      id = this.prefixes.length;
      if (id > 0xffff) throw new RangeError('shipment numbers: more than 65,536 mode:carrier: prefixes');
      this.prefixes.push(prefix);
      this.prefixIds.set(prefix, id);
    }
    return id;
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
    const start = this.startOf(number);
    return this.prefixes[this.bytes.readUInt16LE(start)]! + this.bytes.toString('utf8', start + 2, this.ends[number]!);
  }

  awb(number: number): string {
    return this.bytes.toString('utf8', this.startOf(number) + 2, this.ends[number]!);
  }

  private startOf(number: number): number {
    if (!Number.isInteger(number) || number < 0 || number >= this.count) throw new RangeError(`no shipment numbered ${number}`);
    return number === 0 ? 0 : this.ends[number - 1]!;
  }

  get size(): number {
    return this.count;
  }

  /** The keys in number order, as a checkpoint keeps them (copies). */
  exportState(): ShipmentNumbersState {
    return { prefixes: [...this.prefixes], bytes: new Uint8Array(this.bytes.subarray(0, this.used)), ends: this.ends.slice(0, this.count) };
  }

  /** Takes back an exported state into this (empty) numbering: key n is numbered n again. */
  importState(state: ShipmentNumbersState): void {
    if (this.count > 0) throw new Error('shipment numbers: import into an empty numbering only');
    const { prefixes, bytes, ends } = state;
    if (ends.length > 0 && ends[ends.length - 1] !== bytes.length) throw new Error('shipment numbers: the keys\' ends and bytes differ in length');
    this.bytes = Buffer.alloc(Math.max(bytes.length, 1024));
    this.bytes.set(bytes);
    this.used = bytes.length;
    this.ends = new Uint32Array(Math.max(ends.length, 1024));
    this.ends.set(ends);
    this.hashes = new Uint32Array(this.ends.length);
    for (let number = 0, start = 0; number < ends.length; start = ends[number++]!) {
      if (ends[number]! < start + 2) throw new Error('shipment numbers: the keys\' ends go backwards');
      if (this.bytes.readUInt16LE(start) >= prefixes.length) throw new Error(`shipment numbers: key ${number} has no prefix`);
      this.hashes[number] = fnv1a(this.bytes, start, ends[number]!);
    }
    this.count = ends.length;
    prefixes.forEach((prefix) => this.prefixIdOf(prefix));
    // A key twice would be found under its first number only: such a state is not one this class wrote.
    this.rehash(Math.max(2048, 2 ** Math.ceil(Math.log2((this.count * 4) / 3 + 1))), true);
  }
}

/**
 * The numbering as a checkpoint holds it: the `mode:carrier:` prefixes, every key's bytes (its
 * prefix's number, two bytes, then its AWB's UTF-8) in number order, and where each ends.
 */
export interface ShipmentNumbersState {
  prefixes: string[];
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** FNV-1a, 32 bits, over `bytes[start, end)`. */
function fnv1a(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}
