import { isTerminal } from '../cache/index.ts';
import { closureOfShipment, type LaneBook } from '../lanes/index.ts';
import { normalizePoll, type NormalizedShipment, type NormalizeResult, type RuleSet } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** What the poller needs to know about a shipment to keep it fresh. */
export interface ShipmentState {
  carrier: string;
  awb: string;
  mode: KeyMode;
  terminal: boolean;
  lastPolledMs: number;
}

/**
 * The embedded default's normalizer: every poll from the bus is normalized with the shared pure
 * function; the latest state of each shipment and the lane samples of delivered ones are kept.
 *
 * Per shipment the index keeps one string key (`mode:carrier:AWB`) and one number (the newest
 * poll's time, doubled, plus 1 when terminal): ~70 bytes with the Map's slot, where an object of
 * five fields cost ~140. It is what the poller's work list and the newest-poll rule need.
 */
export class ShipmentIndex {
  private readonly shipments = new Map<string, number>();

  private readonly rules: RuleSet;
  private readonly lanes: LaneBook;
  private readonly prediction?: { add(shipment: NormalizedShipment, mode: KeyMode): void };
  /** `prediction`: the delivery model's book, fed every found shipment (it keeps the delivered ones). */
  constructor(rules: RuleSet, lanes: LaneBook, prediction?: { add(shipment: NormalizedShipment, mode: KeyMode): void }) {
    this.rules = rules;
    this.lanes = lanes;
    this.prediction = prediction;
  }

  /** Takes in one poll; returns its normalization (push's change detection uses it too). */
  handle(poll: CarrierPoll, mode: KeyMode): NormalizeResult {
    const result = normalizePoll(poll, this.rules);
    if (result.kind !== 'found') return result;
    const key = `${mode}:${poll.carrier}:${result.shipment.record.awb}`;
    const polledMs = Date.parse(poll.polled_at);
    const known = this.shipments.get(key);
    // Polls can arrive out of order (replays, retries): the newest poll decides the state.
    if (known !== undefined && Math.floor(known / 2) > polledMs) return result;
    this.shipments.set(key, polledMs * 2 + (isTerminal(result.shipment) ? 1 : 0));
    // A closed shipment's lane closure (the windowed lane statistics, lib/lanes); the book keeps
    // the newest poll's per shipment, so re-delivered polls change nothing.
    const closure = closureOfShipment(result.shipment, mode, polledMs);
    if (closure) this.lanes.add(closure);
    this.prediction?.add(result.shipment, mode);
    return result;
  }

  /** Non-terminal shipments polled since `sinceMs`: the poller's work list. */
  active(sinceMs: number): ShipmentState[] {
    const out: ShipmentState[] = [];
    for (const [key, value] of this.shipments) {
      const lastPolledMs = Math.floor(value / 2);
      if (value % 2 === 1 || lastPolledMs < sinceMs) continue;
      // Modes and carrier slugs hold no ':'; the AWB is the rest.
      const first = key.indexOf(':');
      const second = key.indexOf(':', first + 1);
      out.push({ mode: key.slice(0, first) as KeyMode, carrier: key.slice(first + 1, second), awb: key.slice(second + 1), terminal: false, lastPolledMs });
    }
    return out;
  }

  get size(): number {
    return this.shipments.size;
  }

  /** What a checkpoint keeps of the index (lib/pipeline/checkpoint.ts): each key and its number. */
  exportState(): ShipmentIndexState {
    const keys = new Array<string>(this.shipments.size);
    const values = new Float64Array(this.shipments.size);
    let i = 0;
    for (const [key, value] of this.shipments) {
      keys[i] = key;
      values[i++] = value;
    }
    return { keys, values };
  }

  /** Takes back an exported state into this (empty) index; the books are restored on their own. */
  importState(state: ShipmentIndexState): void {
    if (state.keys.length !== state.values.length) throw new Error('shipment index state: keys and values differ in length');
    for (let i = 0; i < state.keys.length; i++) this.shipments.set(state.keys[i]!, state.values[i]!);
  }
}

/** The index as a checkpoint holds it: keys and their numbers (newest poll time × 2 + terminal) in the same order. */
export interface ShipmentIndexState {
  keys: string[];
  values: Float64Array;
}
