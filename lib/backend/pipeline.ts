/**
 * The pipeline's side of the switch: where polls go (Kafka, or the in-process normalizer with the
 * raw-poll log under DATA_DIR), where lane figures and the delivery model come from (ClickHouse, or
 * the books this process keeps), and which shipments the poller refreshes. Opened by lib/backend,
 * once per process.
 */
import { createInProcessBus, type PollBus } from '../bus/index.ts';
import { ShipmentNumbers } from '../compact/shipment-numbers.ts';
import { loadCalendar } from '../calendar/index.ts';
import {
  ClickHouseLaneSource, ClickHouseLaneWindowSource, ClickHousePredictionSource, activeShipments, type ClickHouseClient,
} from '../clickhouse/index.ts';
import { KafkaBus } from '../kafka/kafka-bus.ts';
import type { Registry } from 'prom-client';
import { createNormalizerMetrics } from '../metrics/index.ts';
import { LaneBook, type LaneStatsSource, type LaneWindowSource } from '../lanes/index.ts';
import type { NormalizeResult } from '../normalize/index.ts';
import { openEmbeddedPipeline } from '../pipeline/embedded.ts';
import type { ShipmentIndex } from '../pipeline/shipment-index.ts';
import { loadPlaces } from '../places/index.ts';
import type { RefreshCandidate } from '../poller/index.ts';
import { PredictionBook, WorkdayIndex, placeLookupOf, type Estimator, type PlaceLookup, type Predictor } from '../prediction/index.ts';
import type { Product } from '../product/index.ts';
import type { CarrierPoll, KeyMode } from '../schemas/index.ts';
import { PollLog } from '../store/poll-log.ts';
import type { Kafka } from 'kafkajs';

/** Where the backend's parts say what happened to them (the app's logger). */
export type BackendLog = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface PipelineSettings {
  /** Days of closed shipments in the lane figures and the delivery model (LANE_WINDOW_DAYS). */
  laneWindowDays: number;
  /** How long a ClickHouse lane figure is reused (LANE_CACHE_TTL_MS). */
  laneCacheTtlMs: number;
  /** The embedded delivery model's rebuild interval (PREDICTION_REBUILD_SECONDS). */
  predictionRebuildMs: number;
}

export interface Lanes {
  /** One lane's figures (the lookup's benchmark). */
  stats: LaneStatsSource;
  /** Every carrier's figures between two prefixes (the lanes API, the analyzer). */
  windows: LaneWindowSource;
}

/** The delivery model this process reads: ClickHouse's newest version, or the book it rebuilds itself. */
export interface Predictions {
  predictor: Predictor;
  estimator: Estimator;
  /** The embedded book (tests rebuild it at once); null when the model comes from ClickHouse. */
  book: PredictionBook | null;
}

export type NormalizedListener = (poll: CarrierPoll, mode: KeyMode, result: NormalizeResult) => Promise<void>;

/** The embedded default's pipeline: every poll logged under DATA_DIR and normalized in process. */
export interface EmbeddedPipeline {
  shipments: ShipmentIndex;
  log: PollLog;
  /** Called after each poll is normalized, before the next one (push's change detection). */
  onNormalized(listener: NormalizedListener): void;
}

export interface PipelineParts {
  /** The places and workdays the delivery model reads (loaded once per process). */
  predictionInputs(): { places: PlaceLookup; workdays: WorkdayIndex };
  lanes(product: Product): Lanes;
  predictions(): Predictions;
  /** The raw-poll bus: Kafka (with its spool under DATA_DIR), or the in-process normalizer. */
  bus(product: Product): Promise<PollBus>;
  /** The embedded pipeline once bus() opened it; null with Kafka. */
  embeddedPipeline(): EmbeddedPipeline | null;
  /** Shipments to keep fresh: the non-terminal ones polled since `sinceMs` (ClickHouse, or the in-process index). */
  activeShipments(sinceMs: number): Promise<RefreshCandidate[]>;
  /** The bus opened so far, if any (readiness, metrics). */
  openedBus(): PollBus | null;
}

interface Connections {
  /** The process's registry: the in-process normalizer counts its polls there. */
  registry: Registry;
  kafka: (() => Kafka) | null;
  clickhouse: ClickHouseClient | null;
  dataDir: string;
  clock: () => number;
  log: BackendLog;
  onClose(close: () => Promise<void> | void): void;
}

export function pipelineParts(settings: PipelineSettings, c: Connections): PipelineParts {
  let inputs: { places: PlaceLookup; workdays: WorkdayIndex } | null = null;
  const predictionInputs = () => (inputs ??= { places: placeLookupOf(loadPlaces()), workdays: new WorkdayIndex(loadCalendar()) });

  // The books the embedded pipeline feeds (and answers from when ClickHouse is not set), keyed by one numbering of shipments.
  const shipments = new ShipmentNumbers();
  let laneBook: LaneBook | null = null;
  const embeddedLanes = (): LaneBook => {
    if (laneBook) return laneBook;
    laneBook = new LaneBook({ windowDays: settings.laneWindowDays, clock: c.clock, shipments });
    // The window slides in the background, never in a lookup (lib/lanes/book.ts).
    c.onClose(laneBook.startSweeping());
    return laneBook;
  };
  let book: PredictionBook | null = null;
  const predictionBook = (): PredictionBook => {
    if (book) return book;
    const created = new PredictionBook({
      ...predictionInputs(), windowDays: settings.laneWindowDays, clock: c.clock, shipments,
      onRebuildError: (err) => c.log('error', `prediction model not rebuilt (the last one answers): ${err.message}`),
    });
    // Rebuilt here only when this process's own normalizer feeds it (with Kafka the normalizer app rebuilds in ClickHouse).
    if (!c.kafka) created.start(settings.predictionRebuildMs);
    c.onClose(() => created.stop());
    book = created;
    return created;
  };

  let lanes: Lanes | null = null;
  let predictions: Predictions | null = null;
  let bus: Promise<PollBus> | null = null;
  let opened: PollBus | null = null;
  let embedded: EmbeddedPipeline | null = null;

  const openEmbedded = async (product: Product): Promise<PollBus> => {
    const listeners: NormalizedListener[] = [];
    const inProcess = createInProcessBus((err) => c.log('error', `normalizer failed on a poll: ${(err as Error).message}`));
    // The same series as the normalizer app's, so /metrics of the one-process start shows this part too.
    const metrics = createNormalizerMetrics(c.registry);
    // The derived state from the checkpoint and the log's tail (or the whole log): lib/pipeline/embedded.ts.
    const pollLog = new PollLog(c.dataDir);
    const pipeline = await openEmbeddedPipeline({
      dataDir: c.dataDir, pollLog, rules: product.rules, lanes: embeddedLanes(), predictions: predictionBook(), log: c.log,
    });
    const { index } = pipeline;
    inProcess.subscribe(async (poll, mode) => {
      pollLog.append({ poll, mode });
      metrics.consumed(1);
      const result = index.handle(poll, mode);
      // Push: a change of a watched shipment becomes an event, queued durably before this returns.
      for (const listener of listeners) await listener(poll, mode, result);
    });
    // The log flushed and a last checkpoint written.
    c.onClose(() => pipeline.close());
    embedded = { shipments: index, log: pollLog, onNormalized: (listener) => { listeners.push(listener); } };
    return inProcess;
  };

  return {
    predictionInputs,
    lanes(product) {
      if (lanes) return lanes;
      const ch = c.clickhouse;
      lanes = ch
        ? {
          stats: new ClickHouseLaneSource(ch, { ttlMs: settings.laneCacheTtlMs }),
          windows: new ClickHouseLaneWindowSource(ch, {
            carriers: product.registry.list().map((carrier) => carrier.slug), windowDays: settings.laneWindowDays, ttlMs: settings.laneCacheTtlMs,
          }),
        }
        : { stats: embeddedLanes(), windows: embeddedLanes() };
      return lanes;
    },
    predictions() {
      if (predictions) return predictions;
      // Distributed: the normalizer rebuilds the model in ClickHouse; this process holds its newest
      // version in memory. ClickHouse without Kafka (no normalizer writes there): the embedded book.
      if (c.kafka && c.clickhouse) {
        const source = new ClickHousePredictionSource(c.clickhouse, {
          ...predictionInputs(),
          log: (message, err, level) => c.log(level === 'info' ? 'info' : 'warn', err ? `${message} ${(err as Error).message}` : message),
        });
        source.start();
        c.onClose(() => source.stop());
        predictions = { predictor: source.predictor, estimator: source.estimator, book: null };
      } else {
        const created = predictionBook();
        predictions = { predictor: created.predictor, estimator: created.estimator, book: created };
      }
      return predictions;
    },
    bus(product) {
      bus ??= (async () => {
        const created = c.kafka
          ? await KafkaBus.open({
            kafka: c.kafka(), dataDir: c.dataDir,
            onError: (err) => c.log('warn', `raw-poll log unavailable, spooling to ${c.dataDir}/spool: ${(err as Error).message}`),
            onRecovered: (ms) => c.log('info', `raw-poll log back after ${Math.round(ms / 1000)} s: sending the spool`),
          })
          : await openEmbedded(product);
        c.onClose(() => created.close());
        opened = created;
        return created;
      })();
      return bus;
    },
    embeddedPipeline: () => embedded,
    async activeShipments(sinceMs) {
      if (embedded) return embedded.shipments.active(sinceMs);
      if (!c.clickhouse) throw new Error('no shipments to refresh: neither ClickHouse nor the embedded pipeline is open');
      return activeShipments(c.clickhouse, sinceMs);
    },
    openedBus: () => opened,
  };
}
