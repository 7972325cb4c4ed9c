/**
 * The delivery model in ClickHouse (contracts.md "Delivery prediction": with ClickHouse, computed
 * there with SQL aggregates so it scales with ClickHouse, not with a Node heap). Three parts:
 * - the normalizer writes each delivered shipment's observations once (`PredictionObservationSink`,
 *   in front of the row writer like LaneClosureSink): lib/prediction's `observeShipment`, per row;
 * - the normalizer rebuilds the model on a timer (`rebuildPredictionModel`): the counts per level
 *   key × stage × bucket, the early counts' scores and the split-conformal thresholds are SQL
 *   aggregates into prediction_cells and prediction_thresholds, a prediction_models row last;
 * - the API holds the newest model in memory (`ClickHousePredictionSource`), re-read when a newer
 *   version is listed, so a lookup only reads memory. Cells are finished (windows at the thresholds)
 *   by lib/prediction's own code, the same the embedded default runs.
 * The SQL mirrors lib/prediction/model.ts `buildFromObserved` and cells.ts `rankCell` step by step;
 * prediction.services.test.ts checks that both paths predict the same on the same polls.
 */
import { stageEpisodes } from '../prediction/episodes.ts';
import { K_SLOTS, SCORE_SCALE } from '../prediction/cells.ts';
import {
  buildSpanOf, DETAIL_FROM_LEVEL, emptyModel, observeShipment, PredictionModel, SLOT_COUNT, STAGE_LIST, stageIndexOf,
  TARGETS, thresholdsOf, unpack, chooseDetail, detailChoiceOf, DETAIL_LEVELS, UNPLACED_DETAIL_LEVELS, UNPLACED_STAGE_LIST, CALENDAR_GROUP_KEYS, MAX_K,
  type CellCounts, type DeliveredShipment, type ThresholdGroup,
} from '../prediction/model.ts';
import { positionScansOf, predictorOf, splitAtNewPlaces, type Predictor } from '../prediction/records.ts';
import { scanPositions } from '../prediction/position.ts';
import { fnv1a32 } from '../random/fnv1a.ts';
import type { Estimator } from '../prediction/book.ts';
import { ServedStates } from '../prediction/served.ts';
import { readServedStates } from './served-states.ts';
import { estimateOf } from '../prediction/estimate.ts';
import { MIN_DELIVERIES, type PlaceLookup } from '../prediction/types.ts';
import type { WorkdayIndex } from '../prediction/workdays.ts';
import type { Stage } from '../schemas/index.ts';
import { clickHouseErrorInfo, type ClickHouseClient } from './client.ts';
import { fromClickHouseDateTime, toClickHouseDateTime } from './datetime.ts';
import { IST_OFFSET_MS } from '../time/index.ts';
import type { PollRows, RowSink } from './rows.ts';
import { sqlInt, sqlStringList } from './sql.ts';

/** UNKNOWN_TABLE, UNKNOWN_DATABASE: what a read meets before the first migration. */
const NOT_MIGRATED_YET = new Set([60, 81]);

const KEY_COLUMNS = ['key_lane', 'key_state', 'key_zone', 'key_service', 'key_carrier'] as const;
/**
 * The detail keys (lib/prediction model.ts detailKey: level key + `|P` + position + daypart), computed per observation;
 * the unplaced stages' only for the first UNPLACED_DETAIL_LEVELS levels.
 */
const DETAIL_COLUMNS = KEY_COLUMNS.slice(DETAIL_FROM_LEVEL).map((c) => `detail_${c.slice(4)}`);
const DETAIL_COLUMNS_SQL = KEY_COLUMNS.slice(DETAIL_FROM_LEVEL)
  .map((c, i) => `if(${c} = ''${i < UNPLACED_DETAIL_LEVELS ? '' : ` OR stage IN ${sqlStringList(UNPLACED_STAGE_LIST)}`}, '', ` +
    `concat(${c}, '|P', toString(position), toString(daypart))) AS ${DETAIL_COLUMNS[i]}`).join(', ');
/** IST days since the epoch of a DateTime column (workdays.ts dayNumberOf, in whole seconds). */
const istDaySql = (column: string) => `toInt32(intDiv(toUInt32(${column}) + ${IST_OFFSET_MS / 1000}, 86400))`;
/**
 * The last k a lookup maps to the observation's delivery day (model.ts lastKOf): counted in calendar
 * days, every k from its own to the delivery day's; in working days its own.
 */
const LAST_K_SQL = `if(concat(stage, '|', toString(position)) IN ${sqlStringList(CALENDAR_GROUP_KEYS)}, ` +
  `least(${MAX_K}, ${istDaySql('delivered_at')} - ${istDaySql('as_of')}), toInt32(k)) AS last_k`;
/** A calibration delivery's score in the early cell's scores `s` (model.ts dayScoreOf): the least over the k that name its day. */
const dayScoreSql = (s: string) => `arrayReduce('min', arraySlice(${s}, k + 1, last_k - k + 1))`;
/** Every key a lookup may read, in its order (model.ts SLOT_COUNT): the detail keys, then the plain ones. */
const SLOT_COLUMNS = [...DETAIL_COLUMNS, ...KEY_COLUMNS];

const pincodeOf = (pin: string | null) => (pin && /^\d{6}$/.test(pin.trim()) ? pin.trim() : null);

/**
 * The delivered shipment a poll's rows describe (what lib/prediction's deliveredShipmentOf reads
 * from the record: its events, booking time, places and delivery), null unless delivered.
 */
export function deliveredOfRows(rows: PollRows, places: PlaceLookup): DeliveredShipment | null {
  const s = rows.shipment;
  if (!s || s.stage !== 'delivered' || s.delivered_at === null) return null;
  const deliveredMs = fromClickHouseDateTime(s.delivered_at);
  const events = rows.events.map((e) => ({
    code: e.code, status: e.status, timestamp: new Date(fromClickHouseDateTime(e.occurred_at)).toISOString(), facility: e.facility, location: e.location,
  }));
  const bookedAt = rows.poll.booked_at === null ? null : new Date(fromClickHouseDateTime(rows.poll.booked_at)).toISOString();
  // Where each scan was, read as lib/prediction reads a record's events and ends.
  const p = rows.poll;
  const scans = places.names ? positionScansOf({ events } as unknown as Parameters<typeof positionScansOf>[0]) : null;
  const positions = scans && places.names ? scanPositions(scans,
    { pincode: p.origin_pincode, city: p.origin_city, state: p.origin_state },
    { pincode: p.destination_pincode, city: p.destination_city, state: p.destination_state }, places.names) : null;
  const staged = stageEpisodes({ events, shipment: { booked_at: bookedAt } } as unknown as Parameters<typeof stageEpisodes>[0]);
  // The in-transit clock restarts at each new place, as deliveredShipmentOf reads a record.
  const episodes = (scans && positions ? splitAtNewPlaces(staged, scans.map((x) => x.ms), positions) : staged)
    .filter((e) => e.stage !== 'delivered' && e.enteredMs <= deliveredMs);
  if (episodes.length === 0) return null;
  const destination = pincodeOf(s.destination_pincode);
  return {
    ...(scans && positions ? { scanMs: scans.map((x) => x.ms), scanPositions: positions } : {}),
    mode: s.mode,
    carrier: s.carrier,
    serviceType: rows.poll.service_type,
    originPincode: pincodeOf(s.origin_pincode),
    destinationPincode: destination,
    destinationState: (destination ? places.stateOf(destination) : null) ?? rows.poll.destination_state,
    deliveredMs,
    episodes,
    seed: fnv1a32(`${s.carrier}:${s.awb}`),
  };
}

/** The prediction_observations rows of one delivered shipment (JSONEachRow). */
export function observationRows(d: DeliveredShipment, awb: string, places: PlaceLookup, workdays: WorkdayIndex): Record<string, unknown>[] {
  const observed = observeShipment(d, places, workdays);
  const keys = Object.fromEntries(KEY_COLUMNS.map((c, i) => [c, observed.keys[i] ?? '']));
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < observed.obs.length; i += 2) {
    const o = unpack(observed.obs[i + 1]!);
    rows.push({
      mode: d.mode, carrier: d.carrier, awb, episode: o.episode, bucket: o.bucket, stage: STAGE_LIST[o.stage]!, ...keys,
      as_of: toClickHouseDateTime(observed.obs[i]! * 1000), daypart: o.slot, position: o.position, k: o.k, weight: o.weight,
      delivered_at: toClickHouseDateTime(d.deliveredMs), version: d.deliveredMs,
    });
  }
  return rows;
}

/**
 * A RowSink in front of another: rows pass on unchanged, and delivered shipments' observations are
 * written once the inner flush stored their rows. A shipment already in prediction_observations
 * (a re-poll after delivery) is skipped: one query on the sort key per flush. If the insert fails
 * the observations stay queued and flush() rejects (the normalizer retries, committing nothing).
 */
export class PredictionObservationSink implements RowSink {
  private queued = new Map<string, { d: DeliveredShipment; awb: string }>();

  private readonly inner: RowSink;
  private readonly client: ClickHouseClient;
  private readonly places: PlaceLookup;
  private readonly workdays: WorkdayIndex;
  constructor(inner: RowSink, client: ClickHouseClient, places: PlaceLookup, workdays: WorkdayIndex) {
    this.inner = inner;
    this.client = client;
    this.places = places;
    this.workdays = workdays;
  }

  write(rows: PollRows | readonly PollRows[]): void {
    this.inner.write(rows);
    for (const r of Array.isArray(rows) ? (rows as readonly PollRows[]) : [rows as PollRows]) {
      const d = deliveredOfRows(r, this.places);
      if (d) this.queued.set(`${d.mode}|${d.carrier}|${r.shipment!.awb}`, { d, awb: r.shipment!.awb });
    }
  }

  async flush(): Promise<void> {
    const taken = this.queued;
    this.queued = new Map();
    try {
      await this.inner.flush();
      await this.store([...taken.values()]);
    } catch (err) {
      for (const [k, v] of this.queued) taken.set(k, v);
      this.queued = taken;
      throw err;
    }
  }

  private async store(pending: { d: DeliveredShipment; awb: string }[]): Promise<void> {
    if (pending.length === 0) return;
    const stored = new Set<string>();
    // Chunked: 18.16's max_query_size is 256 KiB.
    for (let i = 0; i < pending.length; i += 2_000) {
      const chunk = pending.slice(i, i + 2_000);
      const result = await this.client.query({
        query: `SELECT mode, carrier, awb FROM prediction_observations
          WHERE carrier IN ${sqlStringList([...new Set(chunk.map((p) => p.d.carrier))])} AND awb IN ${sqlStringList(chunk.map((p) => p.awb))}
          GROUP BY mode, carrier, awb`,
        format: 'JSONEachRow',
      });
      for (const r of await result.json<{ mode: string; carrier: string; awb: string }>()) stored.add(`${r.mode}|${r.carrier}|${r.awb}`);
    }
    const values = pending.filter((p) => !stored.has(`${p.d.mode}|${p.d.carrier}|${p.awb}`))
      .flatMap((p) => observationRows(p.d, p.awb, this.places, this.workdays));
    if (values.length > 0) await this.client.insert({ table: 'prediction_observations', format: 'JSONEachRow', values });
  }
}

export interface PredictionRebuildOptions {
  nowMs?: number;
  windowDays: number;
  /** Model versions (partitions of prediction_cells and prediction_thresholds) kept. Default 3. */
  keepVersions?: number;
  /** Told each step's duration (the bench prints them). */
  onStep?: (step: string, ms: number) => void;
  /** Per statement (default the client's): a rebuild over millions of observations runs longer than a lookup's query. */
  timeoutMs?: number;
}

export interface PredictionRebuildResult {
  version: number;
  cells: number;
  shipments: number;
  observations: number;
  durationMs: number;
}

/**
 * The early cells with their days' scores (lib/prediction/cells.ts `rankCell` then `scoresByDay`),
 * over `cells`, a subquery of key, stage, bucket, n, counts, n_early, counts_early. One layer per
 * step, so each array is computed once per cell (an expression inside a lambda would be evaluated
 * per element). Mode: the first maximum; rank key: the running minimum from the mode, then the
 * distance to it, then the day; scores: thousandths of n reached, rounded up, then 1000 + the days
 * added past full mass. Cells under 30 early deliveries get an empty array (never a basis).
 */
function scoredCellsSql(cells: string): string {
  const base = ['key', 'stage', 'bucket', 'n', 'counts', 'n_early', 'counts_early'];
  const days = `range(${K_SLOTS})`;
  const steps: [string, string][] = [
    // The cell's early mass: its weights' sum (n_early counts observations, for the 30-delivery rule).
    ['mass', `toUInt64(arraySum(counts_early))`],
    ['m', `toInt32(indexOf(counts_early, arrayReduce('max', counts_early))) - 1`],
    ['dist', `arrayMap((i, mm) -> abs(toInt32(i) - mm), ${days}, ${rep('m')})`],
    ['g', `arrayMap((i, c, mm) -> arrayReduce('min', arraySlice(c, toUInt32(least(toInt32(i), mm) + 1), toUInt32(abs(toInt32(i) - mm) + 1))), ${days}, ` +
      `${rep('counts_early')}, ${rep('m')})`],
    ['ord', `arraySort((i, gi, di) -> (-toInt64(gi), di, i), ${days}, g, dist)`],
    ['cum', `arrayCumSum(arrayMap((i, c) -> toUInt64(c[i + 1]), ord, ${rep('counts_early')}))`],
    ['full', `arrayFirstIndex((x, nn) -> x >= nn, cum, ${rep('mass')})`],
    ['by_rank', `arrayMap((e, j, nn, f) -> toUInt16(if(e < nn, intDiv(e * ${SCORE_SCALE} + nn - 1, greatest(nn, 1)), ${SCORE_SCALE} + j - f)), cum, ` +
      `arrayEnumerate(cum), ${rep('mass')}, ${rep('full')})`],
  ];
  let sql = cells;
  const carried = [...base];
  for (const [name, expression] of steps) {
    sql = `(SELECT ${carried.join(', ')}, ${expression} AS ${name} FROM ${sql})`;
    carried.push(name);
  }
  return `(SELECT ${base.join(', ')}, if(n_early < ${MIN_DELIVERIES}, emptyArrayUInt16(), arrayMap((d, br, o) -> br[indexOf(o, d)], ${days}, ` +
    `${rep('by_rank')}, ${rep('ord')})) AS scores_early FROM ${sql})`;
}

/**
 * `x` repeated once per day: 18.16 loses subquery columns that a lambda only captures ("Unknown
 * identifier"), so every lambda here takes what it needs as array arguments instead.
 */
function rep(x: string): string {
  return `arrayResize([${x}], ${K_SLOTS}, ${x})`;
}

/** The sums of one cell × k: weights over the window and its early part, and observations counted (the 30-delivery rule). */
const SUMS = ['w_all', 'w_early', 'c_all', 'c_early'] as const;

/**
 * Counts per level key × stage × bucket × k (SUMS), over observations `inWindow`; `early` is an
 * as-of before `calS`. 18.16 groups string keys slowly, and spreading every observation over the
 * nine keys (~95 M rows on the bench's 1,000,000 shipments) cost most of a rebuild. So the lane is
 * grouped alone (its keys are thin: summed with the lane, 6 rows in 10 would stay), and below it
 * observations are first summed per (the other level keys) × stage × bucket × k × position ×
 * daypart, which the state pair, zone, carrier + service and carrier cells all share (a twentieth
 * of the rows); only those sums are spread over the eight other keys (the four detail keys built
 * here). The sums are integers: summing in two steps counts exactly what one step did.
 */
function keyCountsSql(inWindow: string, calS: number): string {
  const rest = KEY_COLUMNS.slice(DETAIL_FROM_LEVEL);
  const observed = `(SELECT stage, bucket, k, position, daypart, weight, as_of < toDateTime(${sqlInt(calS)}, 'UTC') AS early, ${KEY_COLUMNS.join(', ')}
    FROM prediction_observations WHERE ${inWindow})`;
  const sums = `sum(weight) AS w_all, sumIf(weight, early) AS w_early, count() AS c_all, countIf(early) AS c_early`;
  const resummed = SUMS.map((c) => `sum(${c}) AS ${c}`).join(', ');
  return `(
        SELECT ${KEY_COLUMNS[0]} AS key, stage, bucket, k, ${sums} FROM ${observed} WHERE ${KEY_COLUMNS[0]} != '' GROUP BY key, stage, bucket, k
        UNION ALL
        SELECT key, stage, bucket, k, ${resummed}
        FROM
        (
          SELECT stage, bucket, k, ${SUMS.join(', ')}, ${DETAIL_COLUMNS_SQL}, ${rest.join(', ')}
          FROM (SELECT stage, bucket, k, position, daypart, ${rest.join(', ')}, ${sums} FROM ${observed}
            GROUP BY stage, bucket, k, position, daypart, ${rest.join(', ')})
        )
        ARRAY JOIN [${SLOT_COLUMNS.filter((c) => c !== KEY_COLUMNS[0]).join(', ')}] AS key
        WHERE key != ''
        GROUP BY key, stage, bucket, k
      )`;
}

/**
 * The cells (key, stage, bucket, n, counts, n_early, counts_early): counts of k made dense (k is
 * distinct within a cell; index 0 reads as 0). Cells under 30 deliveries in both periods are left
 * out before any array work: most level keys × stage × bucket are thin (lanes), and they are never a basis.
 */
function cellsSql(inWindow: string, calS: number): string {
  const dense = (values: string) => `arrayMap((i, kk, cc) -> toUInt32(cc[indexOf(kk, i)]), range(${K_SLOTS}), ${rep('ks')}, ${rep(values)})`;
  return `(
        SELECT key, stage, bucket, n, ${dense('cas')} AS counts, n_early, ${dense('ces')} AS counts_early
        FROM
        (
          SELECT key, stage, bucket, groupArray(k) AS ks, groupArray(w_all) AS cas, groupArray(w_early) AS ces,
            toUInt32(sum(c_all)) AS n, toUInt32(sum(c_early)) AS n_early
          FROM ${keyCountsSql(inWindow, calS)}
          GROUP BY key, stage, bucket
          HAVING n >= ${MIN_DELIVERIES} OR n_early >= ${MIN_DELIVERIES}
        )
      )`;
}

/**
 * Rebuilds the model now: cells, then thresholds, then the prediction_models row that makes the
 * version visible; old versions' partitions are dropped. Safe to run from several normalizers
 * (each writes its own version; readers take the newest listed).
 */
export async function rebuildPredictionModel(client: ClickHouseClient, options: PredictionRebuildOptions): Promise<PredictionRebuildResult> {
  const started = Date.now();
  let stepStarted = started;
  const step = (name: string) => { const now = Date.now(); options.onStep?.(name, now - stepStarted); stepStarted = now; };
  const timeout = { abort_signal: AbortSignal.timeout(options.timeoutMs ?? 300_000) };
  const nowMs = options.nowMs ?? started;
  const version = nowMs;
  const span = buildSpanOf({ modelAtMs: nowMs, windowDays: options.windowDays });
  const startS = Math.ceil(span.startMs / 1000);
  const calS = Math.ceil(span.calibrationStartMs / 1000);
  const endS = Math.ceil(span.resolvedEndMs / 1000);
  const modelAtS = Math.floor(nowMs / 1000);
  const inWindow = `as_of >= toDateTime(${sqlInt(startS)}, 'UTC') AND as_of < toDateTime(${sqlInt(endS)}, 'UTC')
        AND delivered_at <= toDateTime(${sqlInt(modelAtS)}, 'UTC')`;
  const cells = cellsSql(inWindow, calS);
  await client.command({
    query: `INSERT INTO prediction_cells (version, key, stage, bucket, n, counts, n_early, counts_early, scores_early)
      SELECT toUInt64(${sqlInt(version)}), key, stage, bucket, n, counts, n_early, counts_early, scores_early
      FROM ${scoredCellsSql(cells)}`,
    ...timeout,
  });
  step('cells');
  // Calibration: each delivery of the calibration window scored under the early cell a lookup
  // would have used (the first level with 30+; 18.16 joins one table per SELECT, hence the nesting),
  // twice: with the detail keys first (`_d`) and with the plain keys only (`_p`), each with that
  // cell's mode (-1: none found), for the choice between them (model.ts chooseDetail).
  // Each join reads its cell's score of the delivery's day at once and keeps the first found: a
  // score is at least 1 (cells.ts), so 0 is "no early cell yet". Carrying the cells' score arrays
  // through all nine joins instead made every row nine arrays wide. Each column is re-defined only
  // from itself: an alias that read another re-defined one would read its new value.
  const passed = ['stage', 'position', 'k', 'last_k', 'weight', 'bucket', ...SLOT_COLUMNS];
  let scored = `(SELECT stage, bucket, position, k, ${LAST_K_SQL}, weight,
    toUInt16(0) AS score_d, toInt32(-1) AS mode_d, toUInt16(0) AS score_p, toInt32(-1) AS mode_p,
    ${DETAIL_COLUMNS_SQL}, ${KEY_COLUMNS.join(', ')} FROM prediction_observations
    WHERE ${inWindow} AND as_of >= toDateTime(${sqlInt(calS)}, 'UTC'))`;
  for (let l = 0; l < SLOT_COUNT; l++) {
    const s = `s${l + 1}`;
    const m = `if(empty(${s}), -1, m${l + 1})`;
    const found = [`if(score_d != 0, score_d, if(empty(${s}), toUInt16(0), ${dayScoreSql(s)})) AS score_d`, `if(mode_d >= 0, mode_d, ${m}) AS mode_d`];
    // The plain keys (after the detail ones) also give the plain-only cell.
    const plain = [`if(score_p != 0, score_p, if(empty(${s}), toUInt16(0), ${dayScoreSql(s)})) AS score_p`, `if(mode_p >= 0, mode_p, ${m}) AS mode_p`];
    found.push(...(l < DETAIL_LEVELS ? ['score_p', 'mode_p'] : plain));
    // Aliased subqueries: current releases require them on both sides of a JOIN.
    scored = `(SELECT ${passed.join(', ')}, ${found.join(', ')} FROM ${scored} AS o${l + 1}
      ANY LEFT JOIN (SELECT key AS ${SLOT_COLUMNS[l]}, stage, bucket, scores_early AS ${s},
        toInt32(indexOf(counts_early, arrayReduce('max', counts_early))) - 1 AS m${l + 1} FROM prediction_cells
        WHERE version = ${sqlInt(version)} AND n_early >= ${MIN_DELIVERIES}) AS c${l + 1} USING (${SLOT_COLUMNS[l]}, stage, bucket))`;
  }
  // The choice per stage × position: the detail way's extra weighted error and its squares (integers: both paths sum them exactly).
  const errors = await (await client.query({
    query: `SELECT stage, position, toString(sum(excess)) AS excess_sum, toString(sum(excess * excess)) AS squares_sum, count() AS n
      FROM (SELECT stage, position, toInt64(weight) * (abs(toInt64(k) - mode_d) - abs(toInt64(k) - mode_p)) AS excess
        FROM ${scored} WHERE mode_d >= 0 AND mode_p >= 0)
      GROUP BY stage, position`,
    format: 'JSONEachRow',
    ...timeout,
  })).json<{ stage: string; position: number; excess_sum: string; squares_sum: string; n: string | number }>();
  const plainGroups = errors.filter((e) => !chooseDetail(Number(e.excess_sum), Number(e.squares_sum), Number(e.n))).map((e) => `${e.stage}|${e.position}`);
  const plainHere = plainGroups.length === 0 ? '0' : `concat(toString(stage), '|', toString(position)) IN ${sqlStringList(plainGroups)}`;
  // A detail cell (model.ts detailKey: `|P`, position, daypart at the end) of a stage and position that reads the plain keys: never read.
  const unread = plainGroups.length === 0 ? '0'
    : `match(key, '[|]P[0-9][0-9]$') AND concat(toString(stage), '|', substring(key, length(key) - 1, 1)) IN ${sqlStringList(plainGroups)}`;
  step('detail choice');
  // The weighted split-conformal rank (model.ts thresholdOf): the first score whose running weight
  // w satisfies w·n·1000 ≥ W·(n+1)·target, in doubles as there.
  const rank = (target: number) => `scores[greatest(1, arrayFirstIndex((c, tot, nn) -> c * nn * ${SCORE_SCALE} >= tot * (nn + 1) * ${target}, ` +
    `cum, arrayResize([total], length(cum), total), arrayResize([toFloat64(n)], length(cum), toFloat64(n))))]`;
  // Per stage × position, and per stage over every position (position 255), from one pass of the
  // joins: each scored delivery counts in both groups. A position with under 30 scores takes its
  // stage's (model.ts thresholdsOf, applied when the model is read). Weights are summed per score
  // before sorting (n still counts deliveries): the threshold is the score at which the running
  // weight first reaches the bar, and as weights are positive, a run of equal scores reaches it
  // somewhere exactly when it does by the run's end; so the sums pick the same score as sorting every
  // scored delivery did (1.6 M pairs on the bench, 1.5 s of CPU).
  await client.command({
    query: `INSERT INTO prediction_thresholds (version, stage, daypart, position, detail, n, t80, t90)
      SELECT toUInt64(${sqlInt(version)}), stage, toUInt8(0), position, toUInt8(NOT (position != 255 AND ${plainHere})), n,
        toUInt16(if(n < ${MIN_DELIVERIES}, ${TARGETS[0]}, ${rank(TARGETS[0])})), toUInt16(if(n < ${MIN_DELIVERIES}, ${TARGETS[1]}, ${rank(TARGETS[1])}))
      FROM
      (
        SELECT stage, position, n, arrayMap(t -> t.1, sorted) AS scores, arrayCumSum(arrayMap(t -> toFloat64(t.2), sorted)) AS cum,
          arraySum(arrayMap(t -> toFloat64(t.2), sorted)) AS total
        FROM
        (
          SELECT stage, grouped AS position, toUInt32(sum(c)) AS n, arraySort(groupArray((score, w))) AS sorted
          FROM
          (
            SELECT stage, grouped, score, sum(toUInt64(weight)) AS w, count() AS c
            FROM (SELECT stage, position, weight, if(${plainHere}, score_p, score_d) AS score FROM ${scored})
            ARRAY JOIN [position, toUInt8(255)] AS grouped
            WHERE score != 0
            GROUP BY stage, grouped, score
          )
          GROUP BY stage, grouped
        )
      )`,
    ...timeout,
  });
  step('thresholds');
  await client.command({
    query: `INSERT INTO prediction_models (version, model_at, window_days, shipments, observations, cells, duration_ms)
      SELECT toUInt64(${sqlInt(version)}), toDateTime(${sqlInt(modelAtS)}, 'UTC'), toUInt16(${sqlInt(options.windowDays)}),
        toUInt64(uniqExact(mode, carrier, awb)), toUInt64(count()),
        toUInt64((SELECT count() FROM prediction_cells WHERE version = ${sqlInt(version)} AND n >= ${MIN_DELIVERIES} AND NOT (${unread}))),
        toUInt32(${sqlInt(Date.now() - started)})
      FROM prediction_observations WHERE ${inWindow}`,
    ...timeout,
  });
  step('model row');
  // Older versions go whole: their partitions (a reader still on the previous one finds it kept).
  const keep = options.keepVersions ?? 3;
  const listed = await (await client.query({
    query: `SELECT DISTINCT version FROM prediction_models ORDER BY version DESC`,
    format: 'JSONEachRow',
  })).json<{ version: string | number }>();
  const kept = new Set(listed.slice(0, keep).map((r) => String(r.version)));
  kept.add(String(version));
  const parts = await (await client.query({
    query: `SELECT DISTINCT table, partition FROM system.parts WHERE database = currentDatabase() AND active AND table IN ('prediction_cells', ` +
      `'prediction_thresholds')`,
    format: 'JSONEachRow',
  })).json<{ table: string; partition: string }>();
  for (const p of parts) {
    if (kept.has(p.partition) || !/^\d+$/.test(p.partition)) continue;
    await client.command({
      query: `ALTER TABLE ${p.table === 'prediction_cells' ? 'prediction_cells' : 'prediction_thresholds'} DROP PARTITION ${sqlInt(Number(p.partition))}`,
    });
  }
  const [made] = await (await client.query({
    query: `SELECT shipments, observations, cells FROM prediction_models WHERE version = ${sqlInt(version)}`,
    format: 'JSONEachRow',
  })).json<{ shipments: string | number; observations: string | number; cells: string | number }>();
  return {
    version, cells: Number(made?.cells ?? 0), shipments: Number(made?.shipments ?? 0), observations: Number(made?.observations ?? 0),
    durationMs: Date.now() - started,
  };
}

/** The newest finished model's version in ClickHouse, null before the first rebuild. */
export async function newestPredictionVersion(client: ClickHouseClient, signal?: AbortSignal): Promise<number | null> {
  const [row] = await (await client.query({
    query: `SELECT count() AS c, max(version) AS v FROM prediction_models`,
    format: 'JSONEachRow',
    abort_signal: signal,
  })).json<{ c: string | number; v: string | number }>();
  return row && Number(row.c) > 0 ? Number(row.v) : null;
}

/** Reads one version's tables into a model (cells finished by lib/prediction). */
export async function readPredictionModel(
  client: ClickHouseClient, version: number, places: PlaceLookup, workdays: WorkdayIndex, signal?: AbortSignal,
): Promise<PredictionModel> {
  const [model] = await (await client.query({
    query: `SELECT toUInt32(model_at) AS at, shipments, observations FROM prediction_models WHERE version = ${sqlInt(version)} LIMIT 1`,
    format: 'JSONEachRow',
    abort_signal: signal,
  })).json<{ at: string | number; shipments: string | number; observations: string | number }>();
  const rows = await (await client.query({
    query: `SELECT stage, position, detail, n, t80, t90 FROM prediction_thresholds WHERE version = ${sqlInt(version)}`,
    format: 'JSONEachRow',
    abort_signal: signal,
  })).json<{ stage: Stage; position: number; detail: number; n: number; t80: number; t90: number }>();
  const groups: ThresholdGroup[] = [];
  for (const r of rows) {
    const stage = stageIndexOf(r.stage);
    // Position 255: the stage over every position; a version from before 0018 has daypart rows at position 0.
    if (stage !== undefined) {
      groups.push({ stage, position: r.position === 255 ? null : r.position, n: Number(r.n), t80: r.t80, t90: r.t90, detail: Number(r.detail) !== 0 });
    }
  }
  const thresholds = thresholdsOf(groups);
  const cells = await (await client.query({
    query: `SELECT key, stage, bucket, n, counts FROM prediction_cells WHERE version = ${sqlInt(version)} AND n >= ${MIN_DELIVERIES}`,
    format: 'JSONEachRow',
    abort_signal: signal,
  })).json<{ key: string; stage: Stage; bucket: number; n: number; counts: number[] }>();
  const counts: CellCounts[] = [];
  for (const c of cells) {
    const stage = stageIndexOf(c.stage);
    if (stage !== undefined) counts.push({ key: c.key, stage, bucket: c.bucket, n: Number(c.n), counts: c.counts });
  }
  return PredictionModel.fromCounts(counts, thresholds, model ? Number(model.at) * 1000 : version, places, workdays, {
    shipments: Number(model?.shipments ?? 0), observations: Number(model?.observations ?? 0),
  }, detailChoiceOf(groups));
}

export interface ClickHousePredictionSourceOptions {
  places: PlaceLookup;
  workdays: WorkdayIndex;
  /** How often the newest version is looked for. Default 60,000 ms (the normalizer rebuilds every PREDICTION_REBUILD_SECONDS). */
  refreshMs?: number;
  timeoutMs?: number;
  /** `info` for the expected states of a first start, `warn` for failures. */
  log?: (message: string, err: unknown, level: 'info' | 'warn') => void;
}

/**
 * The API's model in distributed mode: the newest version ClickHouse lists, held in memory and
 * swapped whole when a newer one appears; lookups never wait on ClickHouse (null until the first read).
 */
export class ClickHousePredictionSource {
  private current: PredictionModel | null = null;
  private served = ServedStates.NONE;
  private version: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  readonly predictor: Predictor;
  /** `/v1/estimate` over the same model (an empty one until the first read: no estimates). */
  readonly estimator: Estimator;

  private readonly client: ClickHouseClient;
  private readonly options: ClickHousePredictionSourceOptions;
  constructor(client: ClickHouseClient, options: ClickHousePredictionSourceOptions) {
    this.client = client;
    this.options = options;
    this.predictor = predictorOf(() => this.current, options.places);
    const empty = emptyModel(options.places, options.workdays);
    this.estimator = { estimate: (req) => estimateOf(this.current ?? empty, options.places, options.workdays, req, this.served) };
  }

  model(): PredictionModel | null {
    return this.current;
  }

  /** Reads the newest version if it is not the one held; one read at a time. */
  refresh(): Promise<void> {
    this.reading ??= this.read().finally(() => { this.reading = null; });
    return this.reading;
  }

  private async read(): Promise<void> {
    const signal = AbortSignal.timeout(this.options.timeoutMs ?? 30_000);
    const newest = await newestPredictionVersion(this.client, signal);
    if (newest === null || newest === this.version) return;
    const [model, served] = await Promise.all([
      readPredictionModel(this.client, newest, this.options.places, this.options.workdays, signal),
      readServedStates(this.client, newest, signal),
    ]);
    this.current = model;
    this.served = served;
    this.version = newest;
  }

  /** Reads now and then every refreshMs; the timer does not keep the process alive. */
  start(): void {
    this.stop();
    const tick = () => {
      this.refresh().catch((err: unknown) => {
        // Before the normalizer's first migration the database or the model's tables are not there
        // yet: an expected state of a first start, not a failure.
        const notYet = NOT_MIGRATED_YET.has(clickHouseErrorInfo(err).code ?? 0);
        this.options.log?.(notYet
          ? 'no delivery model in ClickHouse yet (expected until the normalizer has migrated and built one); predictions are null until then'
          : 'prediction model read failed; the next refresh retries', err, notYet ? 'info' : 'warn');
      });
    };
    tick();
    this.timer = setInterval(tick, this.options.refreshMs ?? 60_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
