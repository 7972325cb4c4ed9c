/**
 * A sorted set in memory (the embedded store's schedules): member → score, with the members due
 * first found in O(log n) each. A binary min-heap holds (score, member) entries; changing or
 * removing a member leaves its old entry behind, skipped when it reaches the top (an entry counts
 * only while the member still has that score), and the heap is rebuilt once stale entries
 * outnumber live ones. Sorting every member at each claim cost milliseconds per claim with 10,000
 * queues scheduled.
 */
type Entry = [score: number, member: string];

const before = (a: Entry, b: Entry) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

export class ScoredSet {
  private readonly scores = new Map<string, number>();
  private heap: Entry[] = [];

  constructor(entries: Iterable<[string, number]> = []) {
    for (const [member, score] of entries) this.set(member, score);
  }

  get size(): number {
    return this.scores.size;
  }

  get(member: string): number | undefined {
    return this.scores.get(member);
  }

  has(member: string): boolean {
    return this.scores.has(member);
  }

  set(member: string, score: number): void {
    if (this.scores.get(member) === score) return;
    this.scores.set(member, score);
    this.push([score, member]);
    if (this.heap.length > 2 * this.scores.size + 1_024) this.rebuild();
  }

  delete(member: string): void {
    this.scores.delete(member);
  }

  [Symbol.iterator](): IterableIterator<[string, number]> {
    return this.scores.entries();
  }

  /** The smallest score, or null when empty. */
  min(): number | null {
    this.dropStale();
    return this.heap.length ? this.heap[0]![0] : null;
  }

  /** Up to `limit` members with a score ≤ `atMost`, smallest first (ties by member); they stay in the set. */
  due(atMost: number, limit: number): string[] {
    const found: Entry[] = [];
    const members = new Set<string>();
    while (found.length < limit) {
      this.dropStale();
      const top = this.heap[0];
      if (!top || top[0] > atMost) break;
      const entry = this.pop();
      // A member scored x, then y, then x again has two live entries: one is enough.
      if (members.has(entry[1])) continue;
      members.add(entry[1]);
      found.push(entry);
    }
    // Taken off the heap to reach the next ones: put back, still live (the caller usually re-scores them).
    for (const entry of found) this.push(entry);
    return found.map(([, member]) => member);
  }

  private dropStale(): void {
    while (this.heap.length && this.scores.get(this.heap[0]![1]) !== this.heap[0]![0]) this.pop();
  }

  private rebuild(): void {
    this.heap = [...this.scores].map(([member, score]): Entry => [score, member]).sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Entry {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < heap.length && before(heap[l]!, heap[smallest]!)) smallest = l;
        if (r < heap.length && before(heap[r]!, heap[smallest]!)) smallest = r;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }
}
