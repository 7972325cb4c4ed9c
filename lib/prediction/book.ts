/**
 * The embedded default's delivery model: the normalizer hands every delivered shipment here (the
 * newest poll's reading of each), and the model is rebuilt from them on a timer (at least every
 * 10 minutes, contracts.md); lookups read the last built model, swapped whole.
 */
import type { NormalizedShipment } from '../normalize/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';
import { withRoom } from '../compact/columns.ts';
import { ShipmentNumbers } from '../compact/shipment-numbers.ts';
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
  /** The shipments' numbering, shared with the embedded pipeline's shipment index; default: the book's own. */
  shipments?: ShipmentNumbers;
  /** Told when a timed rebuild fails (the last model stays); default: a process warning. */
  onRebuildError?: (err: Error) => void;
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
 * The delivered shipments as a checkpoint keeps them: per shipment its number (in the book's
 * numbering, which the checkpoint keeps with the shipment index), its LEVEL_COUNT level keys
 * (indexes into `levelKeys`, -1 for none), its delivery instant and its observations (one array
 * for all, `obsEnds` where each shipment's end).
 */
export interface DeliveredRowsState {
  shipments: Uint32Array;
  levelKeys: string[];
  keyRefs: Int32Array;
  deliveredMs: Float64Array;
  obsEnds: Uint32Array;
  obs: Uint32Array;
}

/**
 * Delivered rows held outside the process (the checkpoint file they were written to), read back
 * when a rebuild or an export needs them: only a rebuild reads a row, so between rebuilds the
 * process holds none of them (at a million polls their columns were ~35 MiB of a restart's RSS).
 */
export interface StoredRows {
  /** The rows; throws when they cannot be read back whole. */
  read(): DeliveredRowsState;
  /** Called once the book no longer needs them (the file may then be let go). */
  release(): void;
}

/**
 * A book as a checkpoint keeps it: the delivered rows (in columns, or stored outside the process
 * after a load) and the model last built with the states it served, so a restart answers at once
 * and rebuilds on its timer.
 */
export interface PredictionBookState {
  rows: DeliveredRowsState | StoredRows;
  model: PredictionModelState | null;
  served: string[];
}

const isStored = (rows: DeliveredRowsState | StoredRows): rows is StoredRows => 'read' in rows;

/**
 * The delivered shipments in book-wide columns, a row each: its LEVEL_COUNT level keys (indexes into
 * `levelKeys`, -1 for none), its delivery instant and its observations' range in one shared array.
 * An object, a key array and a typed-array view per shipment held ~240 bytes beyond the
 * observations themselves (54 of the book's 80 MiB at a million polls); a row holds 40 bytes and
 * its shipment's entry in `rowOf` (4 bytes).
 */
class DeliveredRows {
  /** By shipment number: its row + 1 (0: none). */
  private rowOf = new Uint32Array(0);
  /** By row: its shipment's number. */
  shipments = new Uint32Array(256);
  count = 0;
  levelKeys: string[] = [];
  private readonly keyRefOf = new Map<string, number>();
  keyRefs = new Int32Array(256 * LEVEL_COUNT);
  deliveredMs = new Float64Array(256);
  obsStart = new Uint32Array(256);
  obsEnd = new Uint32Array(256);
  obs = new Uint32Array(4096);
  /** Observations written; a row written again leaves its old range unused until `kept` packs them. */
  obsUsed = 0;

  /** Writes the row of shipment `number` (a new one, or over its earlier one). */
  put(number: number, shipment: ObservedShipment): void {
    this.rowOf = withRoom(this.rowOf, number + 1);
    let row = this.rowOf[number]! - 1;
    if (row < 0) {
      row = this.count++;
      this.rowOf[number] = row + 1;
      this.shipments = withRoom(this.shipments, row + 1);
      this.shipments[row] = number;
      this.keyRefs = withRoom(this.keyRefs, (row + 1) * LEVEL_COUNT);
      this.deliveredMs = withRoom(this.deliveredMs, row + 1);
      this.obsStart = withRoom(this.obsStart, row + 1);
      this.obsEnd = withRoom(this.obsEnd, row + 1);
    }
    for (let l = 0; l < LEVEL_COUNT; l++) {
      const key = shipment.keys[l];
      this.keyRefs[row * LEVEL_COUNT + l] = key == null ? -1 : this.refOf(key);
    }
    this.deliveredMs[row] = shipment.deliveredMs;
    this.obs = withRoom(this.obs, this.obsUsed + shipment.obs.length);
    this.obs.set(shipment.obs, this.obsUsed);
    this.obsStart[row] = this.obsUsed;
    this.obsUsed += shipment.obs.length;
    this.obsEnd[row] = this.obsUsed;
  }

  private refOf(key: string): number {
    let ref = this.keyRefOf.get(key);
    if (ref === undefined) {
      ref = this.levelKeys.length;
      this.levelKeys.push(key);
      this.keyRefOf.set(key, ref);
    }
    return ref;
  }

  /** Row `row` as the model's build reads a shipment (its observations a view, not a copy). */
  shipment(row: number): ObservedShipment {
    const keys = new Array<string | null>(LEVEL_COUNT);
    for (let l = 0; l < LEVEL_COUNT; l++) {
      const ref = this.keyRefs[row * LEVEL_COUNT + l]!;
      keys[l] = ref < 0 ? null : this.levelKeys[ref]!;
    }
    return { keys, deliveredMs: this.deliveredMs[row]!, obs: this.obs.subarray(this.obsStart[row], this.obsEnd[row]) };
  }

  /** The rows `keep` accepts, packed in a new set of columns (their keys and observations only). */
  kept(keep: (row: number) => boolean): DeliveredRows {
    const out = new DeliveredRows();
    for (let row = 0; row < this.count; row++) if (keep(row)) out.put(this.shipments[row]!, this.shipment(row));
    return out;
  }

  /** The rows as columns cut to their length (copies: the rows may change afterwards). */
  state(): DeliveredRowsState {
    const count = this.count;
    return {
      shipments: this.shipments.slice(0, count), levelKeys: this.levelKeys.slice(), keyRefs: this.keyRefs.slice(0, count * LEVEL_COUNT),
      deliveredMs: this.deliveredMs.slice(0, count), obsEnds: this.obsEnd.slice(0, count), obs: this.obs.slice(0, this.obsUsed),
    };
  }

  /**
   * A row per exported shipment (each numbered below `numbered`); the arrays are copied (they may
   * be views of a whole checkpoint file).
   */
  static fromState(state: DeliveredRowsState, numbered: number): DeliveredRows {
    const count = state.shipments.length;
    if (state.shipments.some((number) => number >= numbered)) {
      throw new Error(`prediction book state: a shipment is not numbered (${numbered} are)`);
    }
    if (state.keyRefs.length !== count * LEVEL_COUNT || state.deliveredMs.length !== count || state.obsEnds.length !== count
      || (count > 0 && state.obsEnds[count - 1] !== state.obs.length)) {
      throw new Error('prediction book state: columns differ in length');
    }
    const rows = new DeliveredRows();
    rows.count = count;
    rows.shipments = state.shipments.slice();
    rows.rowOf = new Uint32Array(rows.shipments.reduce((most, number) => Math.max(most, number + 1), 0));
    rows.shipments.forEach((number, row) => { rows.rowOf[number] = row + 1; });
    rows.levelKeys = state.levelKeys.slice();
    rows.levelKeys.forEach((key, ref) => rows.keyRefOf.set(key, ref));
    rows.keyRefs = state.keyRefs.slice();
    rows.deliveredMs = state.deliveredMs.slice();
    rows.obs = state.obs.slice();
    rows.obsUsed = rows.obs.length;
    rows.obsEnd = state.obsEnds.slice();
    rows.obsStart = new Uint32Array(count);
    for (let row = 1; row < count; row++) rows.obsStart[row] = rows.obsEnd[row - 1]!;
    return rows;
  }
}

export class PredictionBook {
  /**
   * The delivered shipments as of the last export or load (in memory, or stored outside the process
   * once a checkpoint holds them: `storedAs`), null for none; `rows` holds those added since, each
   * in place of its shipment's row in the base when it has one. Each row's observations are computed
   * once, when it is added.
   */
  private base: DeliveredRows | StoredRows | null = null;
  private rows = new DeliveredRows();
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
  readonly shipments: ShipmentNumbers;

  private readonly options: PredictionBookOptions;
  constructor(options: PredictionBookOptions) {
    this.options = options;
    this.clock = options.clock ?? Date.now;
    this.shipments = options.shipments ?? new ShipmentNumbers();
    this.current = emptyModel(options.places, options.workdays);
    this.predictor = predictorOf(() => this.current, options.places);
    this.estimator = { estimate: (req) => estimateOf(this.current, options.places, options.workdays, req, this.served) };
  }

  /**
   * A normalized shipment of a poll: kept when delivered (a delivery is final, so re-polls change
   * nothing). `number`: the shipment's, when the caller (the shipment index) has it already.
   */
  add(shipment: NormalizedShipment, mode: KeyMode, number?: number): void {
    const d = deliveredShipmentOf(shipment.record, shipment.facts, mode, this.options.places);
    if (!d) return;
    const numbered = number ?? this.shipments.numberOf(mode, shipment.record.carrier, shipment.record.awb);
    this.rows.put(numbered, observeShipment(d, this.options.places, this.options.workdays));
  }

  /** Every delivered shipment's row: the base (read back when stored) with those added since in place. */
  private merged(): DeliveredRows {
    const base = this.base;
    if (base === null) return this.rows;
    if (base instanceof DeliveredRows && this.rows.count === 0) return base;
    const all = base instanceof DeliveredRows ? base.kept(() => true) : DeliveredRows.fromState(base.read(), this.shipments.size);
    for (let row = 0; row < this.rows.count; row++) all.put(this.rows.shipments[row]!, this.rows.shipment(row));
    return all;
  }

  /** `rows` become the base (the stored one, if any, is let go) and none are added since. */
  private restOn(rows: DeliveredRows): void {
    if (this.base !== null && !(this.base instanceof DeliveredRows)) this.base.release();
    this.base = rows;
    this.rows = new DeliveredRows();
  }

  /** Rebuilds the model now; shipments delivered before the window are forgotten. */
  rebuild(): PredictionModel {
    const now = this.clock();
    const oldest = now - this.options.windowDays * DAY_MS;
    const all = this.merged();
    // Packed afresh: keys of shipments gone from the window and observations written over do not stay.
    const rows = all.kept((row) => all.deliveredMs[row]! >= oldest);
    this.restOn(rows);
    const shipments = Array.from({ length: rows.count }, (_, row) => rows.shipment(row));
    // keys[1] is the state-pair level's key (model.ts levelKeys).
    this.served = ServedStates.fromStateKeys(stateKeysOf(shipments));
    this.current = buildFromObserved(shipments, {
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

  /**
   * The delivered shipments' observations, the model and its served states, in columns (packed).
   * The rows exported become the base, so that `storedAs` can let them go once a file holds them.
   */
  exportState(): PredictionBookState & { rows: DeliveredRowsState } {
    const rows = this.merged().kept(() => true);
    this.restOn(rows);
    const state = rows.state();
    this.exportedFrom.set(state, rows);
    return { rows: state, model: this.built ? this.current.exportState() : null, served: this.served.entries() };
  }

  /** Each export's rows, to the base they were taken from (`storedAs` checks it is still the base). */
  private readonly exportedFrom = new WeakMap<DeliveredRowsState, DeliveredRows>();

  /**
   * `exported` (the rows of an export) are now held by `stored` (the checkpoint written with them):
   * the book lets its copy go and reads them back from there when it needs them. When a rebuild or
   * another export came between, its rows are newer: `stored` is released and the copy kept.
   */
  storedAs(exported: DeliveredRowsState, stored: StoredRows): void {
    const rows = this.exportedFrom.get(exported);
    if (rows === undefined || this.base !== rows) {
      stored.release();
      return;
    }
    this.base = stored;
  }

  /** Takes back an exported state into this (empty) book; stored rows are read back at the next rebuild or export. */
  importState(state: PredictionBookState): void {
    const empty = this.rows.count === 0 && (this.base === null || (this.base instanceof DeliveredRows && this.base.count === 0));
    if (!empty) throw new Error('prediction book state: import into an empty book only');
    this.base = isStored(state.rows) ? state.rows : DeliveredRows.fromState(state.rows, this.shipments.size);
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
    // A failed rebuild (stored rows that cannot be read back) keeps the last model; the next one tries again.
    const rebuild = () => {
      try {
        this.rebuild();
      } catch (err) {
        (this.options.onRebuildError ?? ((e: Error) => process.emitWarning(e)))(err as Error);
      }
    };
    const every = () => {
      this.timer = setInterval(rebuild, intervalMs);
      this.timer.unref();
    };
    if (wait <= 0) {
      rebuild();
      every();
      return;
    }
    this.timer = setTimeout(() => { rebuild(); every(); }, wait);
    this.timer.unref();
  }

  stop(): void {
    // clearInterval clears a timeout too (one timer type in Node).
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
