/**
 * The embedded default's delivery model: the normalizer hands every delivered shipment here (the
 * newest poll's reading of each), and the model is rebuilt from them on a timer (at least every
 * 10 minutes, contracts.md); lookups read the last built model, swapped whole.
 */
import type { NormalizedShipment } from '../normalize/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';
import { buildFromObserved, emptyModel, observeShipment, type ObservedShipment, type PredictionModel } from './model.ts';
import { estimateOf, type EstimateAnswer, type EstimateRequest } from './estimate.ts';
import { deliveredShipmentOf, predictorOf, type Predictor } from './records.ts';
import { ServedStates } from './served.ts';
import type { PlaceLookup } from './types.ts';
import type { WorkdayIndex } from './workdays.ts';

export interface PredictionBookOptions {
  places: PlaceLookup;
  workdays: WorkdayIndex;
  windowDays: number;
  clock?: () => number;
}

/** `/v1/estimate`'s reading of the current model (estimate.ts). */
export interface Estimator {
  estimate(req: EstimateRequest): EstimateAnswer;
}

/** Each shipment's state-pair level key (model.ts levelKeys: the second). */
function* stateKeysOf(shipments: Iterable<ObservedShipment>): Generator<string | null | undefined> {
  for (const s of shipments) yield s.keys[1];
}

export class PredictionBook {
  /** Each delivered shipment's observations, computed once when it is added. */
  private readonly delivered = new Map<string, ObservedShipment>();
  /**
   * One copy of each level key: shipments of a lane share their keys. Built by concatenation, a
   * shipment's five keys held ~16 string pieces (~1.2 KB per delivered shipment) until pooled.
   * Started afresh at each rebuild, so keys of shipments gone from the window do not stay.
   */
  private keyPool = new Map<string, string>();
  private current: PredictionModel;
  /** Destination states each carrier delivered into in the window, as of the last rebuild (served.ts). */
  private served = ServedStates.NONE;
  private timer: NodeJS.Timeout | null = null;
  private readonly clock: () => number;
  readonly predictor: Predictor;
  readonly estimator: Estimator;

  private readonly options: PredictionBookOptions;
  constructor(options: PredictionBookOptions) {
    this.options = options;
    this.clock = options.clock ?? Date.now;
    this.current = emptyModel(options.places, options.workdays);
    this.predictor = predictorOf(() => this.current, options.places);
    this.estimator = { estimate: (req) => estimateOf(this.current, options.places, options.workdays, req, this.served) };
  }

  /** A normalized shipment of a poll: kept when delivered (a delivery is final, so re-polls change nothing). */
  add(shipment: NormalizedShipment, mode: KeyMode): void {
    const d = deliveredShipmentOf(shipment.record, shipment.facts, mode, this.options.places);
    if (!d) return;
    const observed = observeShipment(d, this.options.places, this.options.workdays);
    this.delivered.set(`${mode}:${shipment.record.carrier}:${shipment.record.awb}`, {
      ...observed, keys: observed.keys.map((k) => (k === null ? null : this.pooled(k))),
    });
  }

  private pooled(key: string): string {
    const known = this.keyPool.get(key);
    if (known !== undefined) return known;
    this.keyPool.set(key, key);
    return key;
  }

  /** Rebuilds the model now; shipments delivered before the window are forgotten. */
  rebuild(): PredictionModel {
    const now = this.clock();
    const oldest = now - this.options.windowDays * DAY_MS;
    for (const [key, d] of this.delivered) if (d.deliveredMs < oldest) this.delivered.delete(key);
    this.keyPool = new Map();
    // keys[1] is the state-pair level's key (model.ts levelKeys).
    this.served = ServedStates.fromStateKeys(stateKeysOf(this.delivered.values()));
    this.current = buildFromObserved(this.delivered.values(), {
      modelAtMs: now, windowDays: this.options.windowDays, places: this.options.places, workdays: this.options.workdays,
    });
    return this.current;
  }

  model(): PredictionModel {
    return this.current;
  }

  /** Rebuilds every `intervalMs` (the first one at once); the timer does not keep the process alive. */
  start(intervalMs: number): void {
    this.stop();
    this.rebuild();
    this.timer = setInterval(() => this.rebuild(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
