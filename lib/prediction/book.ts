/**
 * The embedded default's delivery model: the normalizer hands every delivered shipment here (the
 * newest poll's reading of each), and the model is rebuilt from them on a timer (at least every
 * 10 minutes, contracts.md); lookups read the last built model, swapped whole.
 */
import type { NormalizedShipment } from '../normalize/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';
import {
  buildFromObserved, emptyModel, LEVEL_COUNT, observeShipment, PredictionModel, type ObservedShipment, type PredictionModelState,
} from './model.ts';
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

/**
 * A book as a checkpoint keeps it (lib/pipeline/checkpoint.ts): per delivered shipment its id, its
 * LEVEL_COUNT level keys (indexes into `levelKeys`, -1 for none), its delivery instant and its
 * observations (one array for all, `obsEnds` where each shipment's end); and the model last built
 * with the states it served, so a restart answers at once and rebuilds on its timer.
 */
export interface PredictionBookState {
  ids: string[];
  levelKeys: string[];
  keyRefs: Int32Array;
  deliveredMs: Float64Array;
  obsEnds: Uint32Array;
  obs: Uint32Array;
  model: PredictionModelState | null;
  served: string[];
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
  /** Whether `current` was built (or restored), not the empty model of a new book. */
  private built = false;
  private readonly rebuilt: ((model: PredictionModel) => void)[] = [];
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
    this.built = true;
    for (const listener of this.rebuilt) listener(this.current);
    return this.current;
  }

  /** Calls `listener` after each rebuild (the embedded checkpoint is written then); returns its removal. */
  onRebuilt(listener: (model: PredictionModel) => void): () => void {
    this.rebuilt.push(listener);
    return () => {
      const at = this.rebuilt.indexOf(listener);
      if (at >= 0) this.rebuilt.splice(at, 1);
    };
  }

  /** The delivered shipments' observations, the model and its served states, in columns. */
  exportState(): PredictionBookState {
    const count = this.delivered.size;
    const ids = new Array<string>(count);
    const keyIndex = new Map<string, number>();
    const levelKeys: string[] = [];
    const keyRefs = new Int32Array(count * LEVEL_COUNT).fill(-1);
    const deliveredMs = new Float64Array(count);
    const obsEnds = new Uint32Array(count);
    let total = 0;
    for (const d of this.delivered.values()) total += d.obs.length;
    const obs = new Uint32Array(total);
    let i = 0;
    let at = 0;
    for (const [id, d] of this.delivered) {
      ids[i] = id;
      for (let l = 0; l < LEVEL_COUNT; l++) {
        const key = d.keys[l];
        if (key == null) continue;
        let ref = keyIndex.get(key);
        if (ref === undefined) {
          ref = levelKeys.length;
          keyIndex.set(key, ref);
          levelKeys.push(key);
        }
        keyRefs[i * LEVEL_COUNT + l] = ref;
      }
      deliveredMs[i] = d.deliveredMs;
      obs.set(d.obs, at);
      at += d.obs.length;
      obsEnds[i++] = at;
    }
    return {
      ids, levelKeys, keyRefs, deliveredMs, obsEnds, obs,
      model: this.built ? this.current.exportState() : null, served: this.served.entries(),
    };
  }

  /** Takes back an exported state into this (empty) book; its observations are views of one array. */
  importState(state: PredictionBookState): void {
    if (this.delivered.size > 0) throw new Error('prediction book state: import into an empty book only');
    const count = state.ids.length;
    if (state.keyRefs.length !== count * LEVEL_COUNT || state.deliveredMs.length !== count || state.obsEnds.length !== count
      || (count > 0 && state.obsEnds[count - 1] !== state.obs.length)) {
      throw new Error('prediction book state: columns differ in length');
    }
    // A copy: the state's arrays may be views of a whole checkpoint file (v8.deserialize), which
    // views kept here would keep in memory.
    const obs = state.obs.slice();
    let from = 0;
    for (let i = 0; i < count; i++) {
      const keys = new Array<string | null>(LEVEL_COUNT);
      for (let l = 0; l < LEVEL_COUNT; l++) {
        const ref = state.keyRefs[i * LEVEL_COUNT + l]!;
        keys[l] = ref < 0 ? null : state.levelKeys[ref]!;
      }
      const to = state.obsEnds[i]!;
      this.delivered.set(state.ids[i]!, { keys, deliveredMs: state.deliveredMs[i]!, obs: obs.subarray(from, to) });
      from = to;
    }
    if (state.model) {
      this.current = PredictionModel.fromState(state.model, this.options.places, this.options.workdays);
      this.served = ServedStates.of(state.served);
      this.built = true;
    }
  }

  /** Days of deliveries a rebuild keeps (older ones are forgotten at the rebuild). */
  get windowDays(): number {
    return this.options.windowDays;
  }

  model(): PredictionModel {
    return this.current;
  }

  /**
   * Rebuilds every `intervalMs`; the timer does not keep the process alive. The first one at once,
   * unless the model is younger than `intervalMs` (built, or restored from a checkpoint, moments
   * ago): then when it is `intervalMs` old, so a restart does not rebuild what it just loaded.
   */
  start(intervalMs: number): void {
    this.stop();
    const age = this.clock() - this.current.modelAtMs;
    const wait = this.built && age >= 0 ? intervalMs - age : 0;
    const every = () => {
      this.timer = setInterval(() => this.rebuild(), intervalMs);
      this.timer.unref();
    };
    if (wait <= 0) {
      this.rebuild();
      every();
      return;
    }
    this.timer = setTimeout(() => { this.rebuild(); every(); }, wait);
    this.timer.unref();
  }

  stop(): void {
    // clearInterval clears a timeout too (one timer type in Node).
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
