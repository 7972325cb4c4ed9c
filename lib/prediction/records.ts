/**
 * From normalized records to the model's inputs (pure): a delivered shipment to learn from, and a
 * moving one to predict. Both read a shipment's stages the same way (episodes.ts), so what a lookup
 * calls "2 days in transit" is what the model learned "2 days in transit" to mean.
 */
import type { BaseRecord, ShipmentFacts } from '../normalize/types.ts';
import { fnv1a32 } from '../random/fnv1a.ts';
import type { KeyMode } from '../schemas/index.ts';
import type { IstDay } from '../time/ist-day.ts';
import { runEnteredMs, stageEpisodes, type StageEpisode } from './episodes.ts';
import { POSITIONS, scanPositions, type Position, type PositionScan } from './position.ts';
import type { DeliveredShipment, PredictionModel, ResolvedKeys } from './model.ts';
import { PREDICTED_STAGES, type PlaceLookup, type Prediction, type PredictionQuery } from './types.ts';

type RecordPart = Pick<BaseRecord, 'awb' | 'carrier' | 'events' | 'shipment' | 'origin' | 'destination' | 'estimated_delivery_at'>;

function pincodeOf(location: { pincode: string | null } | null): string | null {
  const pin = location?.pincode?.trim();
  return pin && /^\d{6}$/.test(pin) ? pin : null;
}

/** A record's scans as the position resolver reads them, oldest first (events are stored newest first). */
export function positionScansOf(record: Pick<BaseRecord, 'events'>): PositionScan[] {
  const scans: PositionScan[] = [];
  for (let i = record.events.length - 1; i >= 0; i--) {
    const e = record.events[i]!;
    scans.push({
      ms: Date.parse(e.timestamp),
      text: e.facility || e.location,
      delivering: e.status === 'out_for_delivery' || e.code === 'delivery_attempted',
    });
  }
  return scans;
}

/** A record's scans placed: each one's instant and the position after it, oldest first. */
interface PlacedScans {
  scanMs: number[];
  positions: Uint8Array;
}

/** The position after each of a record's scans, oldest first; null without the place names. */
function recordPositions(record: RecordPart, places: PlaceLookup): PlacedScans | null {
  if (!places.names) return null;
  const scans = positionScansOf(record);
  return { scanMs: scans.map((x) => x.ms), positions: scanPositions(scans, record.origin, record.destination, places.names) };
}

const latestOf = (placed: PlacedScans): Position => (placed.positions.length === 0 ? 'unknown' : POSITIONS[placed.positions[placed.positions.length - 1]!]!);

/** Where the latest scan of a record is (null: no place names to read it by). */
export function latestPositionOf(record: RecordPart, places: PlaceLookup): Position | null {
  const found = recordPositions(record, places);
  return found ? latestOf(found) : null;
}

function destinationStateOf(record: RecordPart, places: PlaceLookup): string | null {
  const pin = pincodeOf(record.destination);
  return (pin ? places.stateOf(pin) : null) ?? record.destination?.state ?? null;
}

/**
 * In-transit episodes split where the parcel reaches a new place (its latest known position
 * changes): the clock of the stage restarts there, so "hours in stage" reads as a hub-level ETA's
 * "hours since it arrived here". Scans at places not read (unknown) change nothing.
 */
export function splitAtNewPlaces(episodes: readonly StageEpisode[], scanMs: readonly number[], positions: Uint8Array): StageEpisode[] {
  const out: StageEpisode[] = [];
  for (const e of episodes) {
    if (e.stage !== 'in_transit') {
      out.push(e);
      continue;
    }
    let current: StageEpisode = { ...e };
    let last = 0;
    for (let i = 0; i < scanMs.length; i++) {
      const ms = scanMs[i]!;
      const position = positions[i]!;
      if (e.leftMs !== null && ms >= e.leftMs) break;
      if (position === 0 || position === last) continue;
      if (ms > e.enteredMs && last !== 0) {
        current.leftMs = ms;
        out.push(current);
        current = { stage: e.stage, enteredMs: ms, leftMs: e.leftMs };
      }
      last = position;
    }
    out.push(current);
  }
  return out;
}

/** A delivered shipment's learning input; null unless delivered with its delivery scan. */
export function deliveredShipmentOf(record: RecordPart, facts: ShipmentFacts, mode: KeyMode, places: PlaceLookup): DeliveredShipment | null {
  if (facts.stage !== 'delivered' || facts.terminal_at_ms === null) return null;
  const placed = recordPositions(record, places);
  const staged = stageEpisodes(record);
  const split = placed ? splitAtNewPlaces(staged, placed.scanMs, placed.positions) : staged;
  const episodes = split.filter((e) => e.stage !== 'delivered' && e.enteredMs <= facts.terminal_at_ms!);
  if (episodes.length === 0) return null;
  return {
    ...(placed ? { scanMs: placed.scanMs, scanPositions: placed.positions } : {}),
    mode,
    carrier: record.carrier,
    serviceType: record.shipment.service_type,
    originPincode: pincodeOf(record.origin),
    destinationPincode: pincodeOf(record.destination),
    destinationState: destinationStateOf(record, places),
    deliveredMs: facts.terminal_at_ms,
    episodes,
    seed: fnv1a32(`${record.carrier}:${record.awb}`),
  };
}

/**
 * Episodes of the records answered most recently (a cached record is answered many times): as read
 * without place names, and split at new places (`splitAtNewPlaces`) where the caller has them.
 */
const episodesMemo = new WeakMap<object, StageEpisode[]>();
const placedEpisodesMemo = new WeakMap<object, StageEpisode[]>();

/** A record's stage episodes, split at new places when its scans are placed (read once per record). */
function episodesOf(record: RecordPart, placed: PlacedScans | null): StageEpisode[] {
  const memo = placed ? placedEpisodesMemo : episodesMemo;
  let episodes = memo.get(record);
  if (episodes === undefined) {
    episodes = stageEpisodes(record);
    if (placed) episodes = splitAtNewPlaces(episodes, placed.scanMs, placed.positions);
    memo.set(record, episodes);
  }
  return episodes;
}

/** When the shipment entered its current stage (in transit: reached its latest place): the last episode's start, else its latest scan. */
function stageEnteredMs(record: RecordPart, facts: ShipmentFacts, placed: PlacedScans | null): number | null {
  const last = episodesOf(record, placed).at(-1);
  if (last && last.stage === facts.stage) return last.enteredMs;
  return facts.last_scan_ms;
}

/** When the current stage's run began (episodes.ts runEnteredMs; null: not in it by its episodes). */
function currentRunEnteredMs(record: RecordPart, facts: ShipmentFacts, placed: PlacedScans | null): number | null {
  const episodes = episodesOf(record, placed);
  const last = episodes.length - 1;
  return last >= 0 && episodes[last]!.stage === facts.stage ? runEnteredMs(episodes, last) : null;
}

/**
 * What a record tells the model, besides its stage and the instant: fixed per poll, so a cache
 * entry keeps it (lib/cache/entry.ts) and answers need not read the record's events again.
 */
export interface QueryFacts {
  carrier: string;
  serviceType: string | null;
  originPincode: string | null;
  destinationPincode: string | null;
  /** The destination state as the carrier wrote it (the place lookup's, when it knows the pincode, wins). */
  carrierDestinationState: string | null;
  /** When the shipment entered its current stage, null when unknown. */
  stageEnteredMs: number | null;
  eddMs: number | null;
  /** Where its latest scan is (position.ts), null when not read. */
  position?: Position | null;
  /** When its current stage's run began (in transit: the pickup), null when unknown. */
  runEnteredMs?: number | null;
}

/** The query facts of a record (its stage episodes read once; its latest scan placed when `places` has names). */
export function queryFactsOf(record: RecordPart, facts: ShipmentFacts, places?: PlaceLookup): QueryFacts {
  // Placed once: the position and the in-transit clock both read it.
  const placed = places ? recordPositions(record, places) : null;
  return {
    position: placed ? latestOf(placed) : null,
    carrier: record.carrier,
    serviceType: record.shipment.service_type,
    originPincode: pincodeOf(record.origin),
    destinationPincode: pincodeOf(record.destination),
    carrierDestinationState: record.destination?.state ?? null,
    stageEnteredMs: stageEnteredMs(record, facts, placed),
    runEnteredMs: currentRunEnteredMs(record, facts, placed),
    eddMs: record.estimated_delivery_at === null ? null : Date.parse(record.estimated_delivery_at),
  };
}

/** The model's question from query facts as of `nowMs`; null when the stage is never predicted. */
export function queryOfFacts(q: QueryFacts, facts: ShipmentFacts, mode: KeyMode, nowMs: number, places: PlaceLookup): PredictionQuery | null {
  if (!PREDICTED_STAGES.has(facts.stage) || q.stageEnteredMs === null) return null;
  return {
    mode,
    carrier: q.carrier,
    serviceType: q.serviceType,
    originPincode: q.originPincode,
    destinationPincode: q.destinationPincode,
    // As destinationStateOf reads a record: the place lookup first, then the carrier's text.
    destinationState: (q.destinationPincode ? places.stateOf(q.destinationPincode) : null) ?? q.carrierDestinationState,
    stage: facts.stage,
    stageEnteredMs: q.stageEnteredMs,
    asOfMs: nowMs,
    eddMs: q.eddMs,
    position: q.position ?? null,
    runEnteredMs: q.runEnteredMs ?? null,
  };
}

/** The model's question about a record as of `nowMs`; null when the stage is never predicted. */
export function queryOf(record: RecordPart, facts: ShipmentFacts, mode: KeyMode, nowMs: number, places: PlaceLookup): PredictionQuery | null {
  if (!PREDICTED_STAGES.has(facts.stage)) return null;
  return queryOfFacts(queryFactsOf(record, facts, places), facts, mode, nowMs, places);
}

/** What the model's tables say about a record now. */
export interface Predictor {
  predictRecord(record: RecordPart, facts: ShipmentFacts, mode: KeyMode, nowMs: number): Prediction | null;
  /** The same from a cache entry's query facts (no record at hand). */
  predictFacts(query: QueryFacts, facts: ShipmentFacts, mode: KeyMode, nowMs: number): Prediction | null;
  /** A record's query facts as this predictor's lookups read them (its latest scan placed, its clock split at new places). */
  factsOf(record: RecordPart, facts: ShipmentFacts): QueryFacts;
  /** P(delivered by the end of IST day `day`) as of `nowMs` (model.ts probabilityBy), null without a prediction. */
  probabilityBy(query: QueryFacts, facts: ShipmentFacts, mode: KeyMode, nowMs: number, day: IstDay): number | null;
}

/** A predictor over one model (the model a lookup reads is swapped whole when it is rebuilt). */
export function predictorOf(model: () => PredictionModel | null, places: PlaceLookup): Predictor {
  // A cached record's level keys (its lane, state pair, zone: string building and place lookups)
  // are resolved against a model once, not at every answer; a rebuilt model resolves them again.
  const resolvedKeys = new WeakMap<QueryFacts, { model: PredictionModel; mode: KeyMode; resolved: ResolvedKeys }>();
  return {
    predictRecord(record, facts, mode, nowMs) {
      const m = model();
      if (m === null) return null;
      const q = queryOf(record, facts, mode, nowMs, places);
      return q === null ? null : m.predict(q);
    },
    factsOf(record, facts) {
      return queryFactsOf(record, facts, places);
    },
    predictFacts(query, facts, mode, nowMs) {
      const m = model();
      if (m === null) return null;
      const q = queryOfFacts(query, facts, mode, nowMs, places);
      if (q === null) return null;
      let known = resolvedKeys.get(query);
      if (known === undefined || known.model !== m || known.mode !== mode) {
        known = { model: m, mode, resolved: m.resolveQuery(q) };
        resolvedKeys.set(query, known);
      }
      return m.predict(q, known.resolved);
    },
    probabilityBy(query, facts, mode, nowMs, day) {
      const m = model();
      if (m === null) return null;
      const q = queryOfFacts(query, facts, mode, nowMs, places);
      return q === null ? null : m.probabilityBy(q, day);
    },
  };
}
