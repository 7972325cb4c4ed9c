/**
 * The embedded default's derived state at a start: the shipment index, the lane book and the
 * prediction book as of the raw-poll log's end. Loaded from the checkpoint (checkpoint.ts) plus the
 * log's tail after it; without a usable checkpoint, rebuilt from the whole log (with progress) and
 * a checkpoint written at once, so only the first start (or one after the file was deleted or
 * damaged) pays for a full replay. Afterwards a checkpoint is written after each prediction rebuild
 * (the book's timer) and at close, never on a poll's path.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG_DIR } from '../config/index.ts';
import type { LaneBook } from '../lanes/index.ts';
import type { RuleSet } from '../normalize/index.ts';
import type { PredictionBook } from '../prediction/index.ts';
import { createProgress } from '../progress/index.ts';
import { pollLogPath, type PositionedPoll, type ReadOptions } from '../store/poll-log.ts';
import {
  checkpointPath, encodeCheckpoint, fingerprintOf, logMismatch, markOfLog, readCheckpoint, writeCheckpoint, type CheckpointToWrite,
} from './checkpoint.ts';
import { ShipmentIndex } from './shipment-index.ts';

export type PipelineLog = (level: 'info' | 'warn' | 'error', message: string) => void;

/**
 * The raw-poll log as the start reads it (lib/store's, opened by lib/backend, the one place that
 * picks the pipeline): every poll handled after the start is appended there first, and
 * `appendedBytes` counts them, so a checkpoint knows the offset its state covers.
 */
export interface EmbeddedPollLog {
  readFrom(fromOffset: number, options?: ReadOptions): AsyncIterable<PositionedPoll>;
  readonly appendedBytes: number;
  flush(): Promise<void>;
}

export interface EmbeddedPipelineOptions {
  dataDir: string;
  /** DATA_DIR's raw-poll log (polls.ndjson), not yet appended to. */
  pollLog: EmbeddedPollLog;
  rules: RuleSet;
  lanes: LaneBook;
  predictions: PredictionBook;
  log?: PipelineLog;
  /** Where the places and calendar the prediction book reads come from (part of the fingerprint). Default: the project's config/. */
  configDir?: string;
  /** A full replay reports its progress (a bar on a terminal, else a line every 10 s). Default true. */
  progress?: boolean;
  clock?: () => number;
}

/** How a start got its state. */
export interface StartReport {
  from: 'checkpoint' | 'log';
  /** Polls read from the log (its tail after a checkpoint, else all). */
  polls: number;
  /** Why no checkpoint was loaded (absent when one was, or the log is empty). */
  reason?: string;
}

export interface EmbeddedPipeline {
  index: ShipmentIndex;
  start: StartReport;
  /** Writes a checkpoint of the state now (one at a time; a call during a write writes again after it). */
  checkpoint(): Promise<void>;
  /** After the last poll: the log flushed and a last checkpoint written. */
  close(): Promise<void>;
}

const defaultLog: PipelineLog = (level, message) => console[level === 'info' ? 'log' : level](message);

/** What the state is derived under besides the log: a checkpoint made under others is not loaded. */
function fingerprint(rules: RuleSet, predictions: PredictionBook, configDir: string): string {
  return fingerprintOf(
    [`mapping ${rules.mappingVersion}`, `prediction window ${predictions.windowDays}`],
    [join(configDir, 'places', 'pincodes.tsv'), join(configDir, 'places', 'regions.yaml'), join(configDir, 'calendar.yaml')],
  );
}

/**
 * Loads the checkpoint into the (empty) books when it is whole, made under the same rules and over
 * this very log; returns the log offset it covers (0: none loaded) and why none was.
 *
 * A function of its own so that the decoded file is garbage once it returns (an async function's
 * locals live until it returns): the start's release (lib/process/release-memory.ts) can then free it.
 */
async function loadCheckpoint(
  dataDir: string, logPath: string, derivedUnder: string, books: { index: ShipmentIndex; lanes: LaneBook; predictions: PredictionBook },
): Promise<{ from: number; reason?: string }> {
  const read = await readCheckpoint(dataDir);
  if ('ignored' in read) return { from: 0, reason: read.ignored };
  if (!('state' in read)) return { from: 0, reason: 'none yet' };
  const { state } = read;
  const mismatch = state.fingerprint !== derivedUnder
    ? 'derived under other mapping rules, places, calendar or window'
    : await logMismatch(logPath, state.log);
  if (mismatch !== null) {
    if ('release' in state.predictions.rows) state.predictions.rows.release();
    return { from: 0, reason: mismatch };
  }
  try {
    books.index.importState(state.index);
    books.lanes.importState(state.lanes);
    books.predictions.importState(state.predictions);
  } catch (err) {
    // A whole file (its checksum holds) this build cannot read: the books may be half filled.
    const why = (err as Error).message;
    throw new Error(`${checkpointPath(dataDir)} could not be loaded (${why}); delete it to rebuild from the raw-poll log`, { cause: err });
  }
  return { from: state.log.offset };
}

export async function openEmbeddedPipeline(options: EmbeddedPipelineOptions): Promise<EmbeddedPipeline> {
  const { dataDir, lanes, predictions, pollLog } = options;
  const log = options.log ?? defaultLog;
  const clock = options.clock ?? Date.now;
  const logPath = pollLogPath(dataDir);
  // One numbering of shipments for the index and both books: the checkpoint stores the books' rows by number.
  if (lanes.shipments !== predictions.shipments) throw new Error('the lane and prediction books must share one ShipmentNumbers');
  const index = new ShipmentIndex(options.rules, { shipments: lanes.shipments, lanes, prediction: predictions });
  const derivedUnder = fingerprint(options.rules, predictions, options.configDir ?? DEFAULT_CONFIG_DIR);

  const loading = performance.now();
  const { from, reason } = await loadCheckpoint(dataDir, logPath, derivedUnder, { index, lanes, predictions });
  const loadedMs = Math.round(performance.now() - loading);
  const full = from === 0;
  const progress = createProgress({ label: 'embedded start', unit: 'KiB', enabled: full && options.progress !== false });
  let logEnd = from;
  let polls = 0;
  const started = performance.now();
  let announced = false;
  for await (const { poll, mode, end } of pollLog.readFrom(from, {
    onDamaged: (line) => log('error', `skipped damaged line ${line}${from ? ` after byte ${from}` : ''} of ${logPath}`),
    onEnd: (offset) => { logEnd = offset; },
  })) {
    if (!announced && full) {
      // One line, and only when there is history to replay (an empty log needs no checkpoint yet).
      log('warn', `checkpoint ${checkpointPath(dataDir)} not loaded (${reason}): rebuilding the embedded state from the whole raw-poll log`);
      progress.phase('replay of the raw-poll log', Math.ceil(statSync(logPath).size / 1024));
      announced = true;
    }
    index.handle(poll, mode);
    if (++polls % 4096 === 0) progress.update(Math.floor(end / 1024));
  }
  progress.stop();
  const ms = Math.round(performance.now() - started);
  if (!full) log('info', `embedded state: checkpoint to byte ${from} loaded (${loadedMs} ms), ${polls} polls of the log's tail read (${ms} ms)`);
  else if (polls > 0) log('info', `embedded state: rebuilt from ${polls} polls of the raw-poll log (${ms} ms)`);

  // The log offset the state covers: what was read, plus what was appended since (handled as appended).
  const covered = () => logEnd + pollLog.appendedBytes;
  let writing: Promise<void> | null = null;
  const writeNow = async () => {
    // Taken in one synchronous step: no poll is handled between the offset and the state.
    const offset = covered();
    const exported = predictions.exportState();
    const state: Omit<CheckpointToWrite, 'log'> = {
      fingerprint: derivedUnder, writtenAtMs: clock(), index: index.exportState(), lanes: lanes.exportState(), predictions: exported,
    };
    // The lines up to the offset are in the file before they are hashed and the checkpoint names them.
    await pollLog.flush();
    const bytes = encodeCheckpoint({ ...state, log: await markOfLog(logPath, offset) });
    // The book's delivered rows are read back from the file from now on, not held in memory.
    predictions.storedAs(exported.rows, await writeCheckpoint(dataDir, bytes));
  };
  const checkpoint = async (): Promise<void> => {
    while (writing) await writing.catch(() => undefined);
    writing = writeNow();
    try {
      await writing;
    } finally {
      writing = null;
    }
  };
  const written = (err?: unknown) => {
    if (err) log('error', `checkpoint not written (the next start reads more of the log): ${(err as Error).message}`);
  };

  if (full && polls > 0) {
    // The model is part of the checkpoint: built now, so a restart answers predictions at once.
    predictions.rebuild();
    await checkpoint().then(() => written(), written);
  }
  const stopListening = predictions.onRebuilt(() => { void checkpoint().then(() => written(), written); });

  return {
    index,
    start: { from: full ? 'log' : 'checkpoint', polls, ...(full && polls > 0 ? { reason } : {}) },
    checkpoint,
    async close() {
      stopListening();
      await pollLog.flush();
      await checkpoint().then(() => written(), written);
    },
  };
}
