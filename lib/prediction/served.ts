/**
 * Who serves where (contracts.md "Delivery prediction", `GET /v1/estimate`): the destination states
 * each carrier delivered into within the model's window, read from the network's own deliveries.
 * A carrier that never delivered into a state is not offered there, whatever its carrier-level
 * figures say (a regional carrier of the West does not serve the North-East). Pure.
 *
 * Read from the state-pair level keys of delivered shipments (model.ts `levelKeys`:
 * `mode|carrier|service|S|originState>destinationState`), which both the embedded book and
 * ClickHouse's observations hold: so a delivery counts when both its pincodes' states are known.
 */
import type { KeyMode } from '../schemas/index.ts';

/** The level marker of a state-pair key (model.ts levelKeys). */
const STATE_PAIR = 'S';

export class ServedStates {
  /** `mode|carrier|destinationState` of every delivery seen. */
  private readonly served: ReadonlySet<string>;
  private constructor(served: ReadonlySet<string>) {
    this.served = served;
  }

  /** From state-pair level keys (nulls and other levels' keys are skipped). */
  static fromStateKeys(keys: Iterable<string | null | undefined>): ServedStates {
    const seen = new Set<string>();
    const served = new Set<string>();
    for (const key of keys) {
      // Shipments of a lane share one key string: each distinct key is read once.
      if (!key || seen.has(key)) continue;
      seen.add(key);
      const parts = key.split('|');
      if (parts.length !== 5 || parts[3] !== STATE_PAIR) continue;
      const to = parts[4]!.indexOf('>');
      if (to < 0) continue;
      served.add(`${parts[0]}|${parts[1]}|${parts[4]!.slice(to + 1)}`);
    }
    return new ServedStates(served);
  }

  /** Every `mode|carrier|state` served (a checkpoint keeps them with the model they go with). */
  entries(): string[] {
    return [...this.served];
  }

  /** Back from `entries()`. */
  static of(entries: Iterable<string>): ServedStates {
    return new ServedStates(new Set(entries));
  }

  /** Nothing known yet (no model built): no carrier is known to serve anywhere. */
  static readonly NONE = new ServedStates(new Set());

  /** Whether `carrier` delivered into `state` in `mode`'s network within the window. */
  serves(mode: KeyMode, carrier: string, state: string): boolean {
    return this.served.has(`${mode}|${carrier}|${state}`);
  }
}
