/**
 * A sorted multiset of numbers in blocks (each sorted, blocks in order): insert and remove cost a
 * binary search and a move of at most one block's values, the k-th value a walk over block sizes.
 * The lane book keeps each lane's transit times in one, so a new closure never re-sorts the lane
 * and its p50/p90 are read without a pass over its closures.
 */
const BLOCK = 512;

export class SortedNumbers {
  private blocks: number[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The index of the first block whose last value is >= value (the last block when none is). */
  private blockFor(value: number): number {
    let lo = 0;
    let hi = this.blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const block = this.blocks[mid]!;
      if (block[block.length - 1]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(value: number): void {
    this.count++;
    if (this.blocks.length === 0) {
      this.blocks.push([value]);
      return;
    }
    const b = this.blockFor(value);
    const block = this.blocks[b]!;
    block.splice(lowerBound(block, value), 0, value);
    if (block.length > 2 * BLOCK) this.blocks.splice(b + 1, 0, block.splice(BLOCK));
  }

  /** Removes one occurrence of `value`; false when it is not held. */
  remove(value: number): boolean {
    if (this.blocks.length === 0) return false;
    const b = this.blockFor(value);
    const block = this.blocks[b]!;
    const i = lowerBound(block, value);
    if (i >= block.length || block[i] !== value) return false;
    block.splice(i, 1);
    if (block.length === 0) this.blocks.splice(b, 1);
    this.count--;
    return true;
  }

  /** The k-th smallest value (0-based), k < size. */
  at(k: number): number {
    for (const block of this.blocks) {
      if (k < block.length) return block[k]!;
      k -= block.length;
    }
    throw new RangeError(`index ${k} past the end`);
  }
}

/** The first index whose value is at least `value` in an ascending array (its length when none is). */
export function lowerBound(sorted: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
