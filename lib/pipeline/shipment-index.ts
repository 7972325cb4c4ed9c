import { isTerminal } from '../cache/index.ts';
import { closureOfShipment, type LaneBook } from '../lanes/index.ts';
import { normalizePoll, type NormalizedShipment, type NormalizeResult, type RuleSet } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { withRoom } from '../compact/columns.ts';
import type { ShipmentNumbers, ShipmentNumbersState } from '../compact/shipment-numbers.ts';

/** What the poller needs to know about a shipment to keep it fresh. */
export interface ShipmentState {
  carrier: string;
  awb: string;
  mode: KeyMode;
  terminal: boolean;
  lastPolledMs: number;
}

/** The books the index feeds, keyed by its shipments' numbers. */
export interface ShipmentIndexBooks {
  /** The numbering the index assigns and the books key their rows by (one for all three). */
  shipments: ShipmentNumbers;
  lanes: LaneBook;
  /** The delivery model's book, fed every found shipment (it keeps the delivered ones). */
  prediction?: { add(shipment: NormalizedShipment, mode: KeyMode, number?: number): void };
}

/**
 * The embedded default's normalizer: every poll from the bus is normalized with the shared pure
 * function; the latest state of each shipment and the lane samples of delivered ones are kept.
 *
 * Per shipment the index keeps its number (ShipmentNumbers: the key string is held once, for the
 * books too) and one number in a column: the newest poll's time, doubled, plus 1 when terminal.
 * It is what the poller's work list and the newest-poll rule need.
 */
export class ShipmentIndex {
  /** By shipment number: newest poll's time × 2 + 1 when terminal; 0: none yet. */
  private newest = new Float64Array(1024);
  /** How many numbers have a value (the books' numbering may hold more: a shared numbering). */
  private held = 0;
  private readonly shipments: ShipmentNumbers;

  private readonly rules: RuleSet;
  private readonly books: ShipmentIndexBooks;
  constructor(rules: RuleSet, books: ShipmentIndexBooks) {
    this.rules = rules;
    this.books = books;
    this.shipments = books.shipments;
  }

  /** Takes in one poll; returns its normalization (push's change detection uses it too). */
  handle(poll: CarrierPoll, mode: KeyMode): NormalizeResult {
    const result = normalizePoll(poll, this.rules);
    if (result.kind !== 'found') return result;
    const number = this.shipments.numberOf(mode, poll.carrier, result.shipment.record.awb);
    this.newest = withRoom(this.newest, number + 1);
    const polledMs = Date.parse(poll.polled_at);
    const known = this.newest[number]!;
    // Polls can arrive out of order (replays, retries): the newest poll decides the state.
    if (known !== 0 && Math.floor(known / 2) > polledMs) return result;
    if (known === 0) this.held++;
    this.newest[number] = polledMs * 2 + (isTerminal(result.shipment) ? 1 : 0);
    // A closed shipment's lane closure (the windowed lane statistics, lib/lanes); the book keeps
    // the newest poll's per shipment, so re-delivered polls change nothing.
    const closure = closureOfShipment(result.shipment, mode, polledMs);
    if (closure) this.books.lanes.add(closure, number);
    this.books.prediction?.add(result.shipment, mode, number);
    return result;
  }

  /** Non-terminal shipments polled since `sinceMs`: the poller's work list. */
  active(sinceMs: number): ShipmentState[] {
    const out: ShipmentState[] = [];
    for (let number = 0; number < this.shipments.size; number++) {
      const value = this.newest[number] ?? 0;
      const lastPolledMs = Math.floor(value / 2);
      if (value === 0 || value % 2 === 1 || lastPolledMs < sinceMs) continue;
      const key = this.shipments.key(number);
      const first = key.indexOf(':');
      const second = key.indexOf(':', first + 1);
      out.push({ mode: key.slice(0, first) as KeyMode, carrier: key.slice(first + 1, second), awb: key.slice(second + 1), terminal: false, lastPolledMs });
    }
    return out;
  }

  /** Shipments the index holds a poll of. */
  get size(): number {
    return this.held;
  }

  /**
   * What a checkpoint keeps of the index (lib/pipeline/checkpoint.ts): the numbering's keys and
   * each number's value; the books' rows name shipments by these numbers.
   */
  exportState(): ShipmentIndexState {
    const values = new Float64Array(this.shipments.size);
    values.set(this.newest.subarray(0, values.length));
    return { shipments: this.shipments.exportState(), values };
  }

  /** Takes back an exported state into this (empty) index and its numbering, before the books are restored. */
  importState(state: ShipmentIndexState): void {
    if (state.shipments.ends.length !== state.values.length) throw new Error('shipment index state: keys and values differ in length');
    this.shipments.importState(state.shipments);
    // A copy: the state's array may be a view of a whole checkpoint file.
    this.newest = withRoom(state.values.slice(), 1024);
    this.held = this.newest.reduce((count, value) => (value !== 0 ? count + 1 : count), 0);
  }
}

/** The index as a checkpoint holds it: the shipments' keys in number order and each one's newest poll time × 2 + terminal. */
export interface ShipmentIndexState {
  shipments: ShipmentNumbersState;
  values: Float64Array;
}
