import { withRoom } from '../compact/columns.ts';
import { ownString } from '../compact/own-string.ts';

/**
 * Per lane, how many counted failed attempts gave each reason, in columns: a reason is a number
 * (its index among the reasons seen, a dozen NDR codes or so), a lane's counts a chain of entries
 * (reason, count, next). A Map of reasons per lane cost ~200 bytes a lane: 5.2 MiB of a
 * million-poll restart's heap for the ~25,000 lanes with failed attempts (heap snapshot); an
 * entry costs 10 bytes.
 */
export class ReasonCounts {
  private readonly reasonIds = new Map<string, number>();
  private readonly reasons: string[] = [];
  /** By lane: its first entry + 1 (0: none). */
  private head = new Uint32Array(0);
  private entryReason = new Uint16Array(256);
  private entryCount = new Int32Array(256);
  /** By entry: the lane's next entry + 1 (0: the last). */
  private entryNext = new Uint32Array(256);
  private entries = 0;

  /** Adds `by` (±1) to the count of `reason` in `lane`. */
  add(lane: number, reason: string, by: number): void {
    const id = this.idOf(reason);
    this.head = withRoom(this.head, lane + 1);
    for (let e = this.head[lane]!; e !== 0; e = this.entryNext[e - 1]!) {
      if (this.entryReason[e - 1] === id) {
        this.entryCount[e - 1] = this.entryCount[e - 1]! + by;
        return;
      }
    }
    const entry = this.entries++;
    this.entryReason = withRoom(this.entryReason, this.entries);
    this.entryCount = withRoom(this.entryCount, this.entries);
    this.entryNext = withRoom(this.entryNext, this.entries);
    this.entryReason[entry] = id;
    this.entryCount[entry] = by;
    this.entryNext[entry] = this.head[lane]!;
    this.head[lane] = entry + 1;
  }

  /** The lane's reasons with a count above 0, by name, with their counts. */
  of(lane: number): [reason: string, count: number][] {
    const out: [string, number][] = [];
    for (let e = lane < this.head.length ? this.head[lane]! : 0; e !== 0; e = this.entryNext[e - 1]!) {
      const count = this.entryCount[e - 1]!;
      if (count > 0) out.push([this.reasons[this.entryReason[e - 1]!]!, count]);
    }
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private idOf(reason: string): number {
    let id = this.reasonIds.get(reason);
    if (id === undefined) {
      id = this.reasons.length;
      if (id > 0xffff) throw new RangeError('more than 65,536 distinct failed-attempt reasons');
      const own = ownString(reason);
      this.reasons.push(own);
      this.reasonIds.set(own, id);
    }
    return id;
  }
}
