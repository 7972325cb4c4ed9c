/**
 * Test support for the embedded checkpoint (lib/pipeline/embedded.test.ts): a raw-poll log of a
 * small generated network history, the books a start fills, and what those books answer, so a
 * start from a checkpoint and one that replays the whole log can be compared answer for answer.
 */
import { ShipmentNumbers } from '../../compact/shipment-numbers.ts';
import { writeFileSync } from 'node:fs';
import { loadCalendar } from '../../calendar/index.ts';
import { LaneBook, type WindowedLaneStats } from '../../lanes/index.ts';
import { loadNetworkConfig } from '../../network/config.ts';
import { loadPlaces } from '../../places/index.ts';
import { placeLookupOf, PredictionBook, WorkdayIndex, type EstimateAnswer } from '../../prediction/index.ts';
import { loadProduct } from '../../product/index.ts';
import { historyPolls } from '../../sandbox/history.ts';
import { PollLog, pollLogPath } from '../../store/poll-log.ts';
import { openEmbeddedPipeline, type EmbeddedPipeline, type EmbeddedPipelineOptions } from '../embedded.ts';
import type { ShipmentState } from '../shipment-index.ts';

/** The history's end; the books' clock is an hour later. */
export const HISTORY_END_MS = Date.parse('2026-06-01T00:00:00+05:30');
export const NOW_MS = HISTORY_END_MS + 3_600_000;

const product = loadProduct();
const places = placeLookupOf(loadPlaces());
const workdays = new WorkdayIndex(loadCalendar());

/**
 * The lines of a history of `shipments` journeys over 90 days, every poll of each (journeys still
 * moving at the end too, so some shipments are active), in the log's own line format, test mode.
 */
export async function historyLines(shipments: number): Promise<string[]> {
  const lines: string[] = [];
  for await (const { polls } of historyPolls({
    config: loadNetworkConfig(), calendar: loadCalendar(), places: loadPlaces(), shipments, days: 90, seed: 7, endMs: HISTORY_END_MS,
  })) {
    for (const poll of polls) lines.push(`${JSON.stringify({ mode: 'test', poll })}\n`);
  }
  return lines;
}

export function writeLog(dataDir: string, lines: readonly string[]): void {
  writeFileSync(pollLogPath(dataDir), lines.join(''));
}

export interface Opened extends EmbeddedPipeline {
  pollLog: PollLog;
  lanes: LaneBook;
  predictions: PredictionBook;
  /** Every line the start logged. */
  logged: string[];
}

/** What a start does: new books, then the state from the checkpoint and the log's tail (or the whole log). */
export async function openBooks(dataDir: string, options: Partial<EmbeddedPipelineOptions> = {}): Promise<Opened> {
  const clock = () => NOW_MS;
  const shipments = new ShipmentNumbers();
  const lanes = new LaneBook({ windowDays: 90, clock, ttlMs: 0, shipments });
  const predictions = new PredictionBook({ places, workdays, windowDays: 90, clock, shipments });
  const logged: string[] = [];
  const pollLog = new PollLog(dataDir);
  const pipeline = await openEmbeddedPipeline({
    dataDir, pollLog, rules: product.rules, lanes, predictions, clock, progress: false,
    log: (level, message) => logged.push(`${level}: ${message}`), ...options,
  });
  return { ...pipeline, pollLog, lanes, predictions, logged };
}

export interface Answers {
  shipments: number;
  active: ShipmentState[];
  lanes: (WindowedLaneStats | null)[];
  model: { shipments: number; observations: number; cells: number };
  estimate: EstimateAnswer;
}

/** What the books answer now, the model rebuilt at the same instant for both sides of a comparison. */
export function answersOf(opened: Opened): Answers {
  const lanes = opened.lanes.exportState().lanes.sort();
  const model = opened.predictions.rebuild();
  return {
    shipments: opened.index.size,
    active: opened.index.active(0).sort((a, b) => (a.awb < b.awb ? -1 : a.awb > b.awb ? 1 : 0)),
    lanes: lanes.map((lane) => opened.lanes.statsOf(lane)),
    model: { shipments: model.summary.shipments, observations: model.summary.observations, cells: model.summary.cells },
    estimate: opened.predictions.estimator.estimate({
      mode: 'test', originPincode: '400001', destinationPincode: '700001', shipDate: '2026-06-02', carrier: null, serviceType: null, nowMs: NOW_MS,
    }),
  };
}
