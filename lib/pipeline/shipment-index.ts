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
 */
export class ShipmentIndex {
  private readonly shipments = new Map<string, ShipmentState>();

  /** `prediction`: the delivery model's book, fed every found shipment (it keeps the delivered ones). */
  constructor(private readonly rules: RuleSet, private readonly lanes: LaneBook, private readonly prediction?: { add(shipment: NormalizedShipment, mode: KeyMode): void }) {}

  /** Takes in one poll; returns its normalization (push's change detection uses it too). */
  handle(poll: CarrierPoll, mode: KeyMode): NormalizeResult {
    const result = normalizePoll(poll, this.rules);
    if (result.kind !== 'found') return result;
    const key = `${mode}:${poll.carrier}:${result.shipment.record.awb}`;
    const polledMs = Date.parse(poll.polled_at);
    const known = this.shipments.get(key);
    // Polls can arrive out of order (replays, retries): the newest poll decides the state.
    if (known && known.lastPolledMs > polledMs) return result;
    this.shipments.set(key, { carrier: poll.carrier, awb: result.shipment.record.awb, mode, terminal: isTerminal(result.shipment), lastPolledMs: polledMs });
    // A closed shipment's lane closure (the windowed lane statistics, lib/lanes); the book keeps
    // the newest poll's per shipment, so re-delivered polls change nothing.
    const closure = closureOfShipment(result.shipment, mode, polledMs);
    if (closure) this.lanes.add(closure);
    this.prediction?.add(result.shipment, mode);
    return result;
  }

  /** Non-terminal shipments polled since `sinceMs`: the poller's work list. */
  active(sinceMs: number): ShipmentState[] {
    return [...this.shipments.values()].filter((s) => !s.terminal && s.lastPolledMs >= sinceMs);
  }

  get size(): number {
    return this.shipments.size;
  }
}
