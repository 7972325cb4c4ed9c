/**
 * The embedded default's first start: an empty DATA_DIR gets a test-mode history in its raw-poll
 * log (DATA_DIR/polls.ndjson), which the runtime then reads like any logged polls, so a newcomer's
 * first lookups show a benchmark and `GET /v1/lanes` shows carriers. Live keys never see it: every
 * line is logged for mode `test` (lane keys `test:…`, lib/lanes).
 *
 * The history is written beside the log (`polls.ndjson.seeding`) and renamed onto it only once
 * whole, so the log is absent or complete: a start killed while seeding leaves only the temporary
 * file, and the next start (still a first start) deletes it and seeds again. Before, the seed wrote
 * the log itself, and a kill left a partial history that no later start completed.
 */
import { existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDir } from '../kv/files.ts';
import { loadCalendar } from '../calendar/index.ts';
import { loadNetworkConfig } from '../network/config.ts';
import { loadPlaces } from '../places/index.ts';
import { pollLogPath, type LoggedPoll } from '../store/poll-log.ts';
import { DAY_MS } from '../time/index.ts';
import { historyPolls } from './history.ts';

export interface SeedOptions {
  shipments: number;
  days: number;
  seed?: number;
  configDir?: string;
  now?: number;
}

/** True when the data dir has no raw-poll log yet (a first start). */
export function isFirstStart(dataDir: string): boolean {
  const path = pollLogPath(dataDir);
  return !existsSync(path) || statSync(path).size === 0;
}

/** Where a seed is written until it is whole (then renamed to the log); one found at a start was cut short. */
export function seedingPath(dataDir: string): string {
  return `${pollLogPath(dataDir)}.seeding`;
}

/**
 * Journeys still moving in this many days before the end keep every poll a poller made of them;
 * older ones only their latest. `predict backtest --from-embedded` learns from each shipment's
 * newest poll before its --split and scores every poll after it, so a split up to three weeks back
 * scores thousands (one poll per journey left it ten), while a first start reads ~1.6 lines a journey, not ~3.3.
 */
export const SEED_ALL_POLLS_DAYS = 21;

/**
 * Writes the history's closed journeys into the empty log and returns how many journeys were
 * generated and how many polls written (0 when the log already has lines). The lane figures need
 * each journey's closed state (its latest poll); journeys of the last SEED_ALL_POLLS_DAYS keep the
 * polls made while they moved too (the config's `history.polls_per_journey`). `redone`: a seed cut
 * short by an earlier start was found and thrown away (this one wrote the history whole).
 */
export async function seedEmbeddedHistory(
  dataDir: string, options: SeedOptions,
): Promise<{ journeys: number; polls: number; redone: boolean }> {
  const temp = seedingPath(dataDir);
  // Cut short by a kill: nothing of it was ever read (the log is absent or empty), so it goes.
  // One process per DATA_DIR (docs/operators/running.md), so no other start is writing it now.
  const redone = existsSync(temp);
  if (redone) rmSync(temp, { force: true });
  if (options.shipments <= 0 || !isFirstStart(dataDir)) return { journeys: 0, polls: 0, redone: false };
  mkdirSync(dataDir, { recursive: true });
  // The log's own line format (lib/store/poll-log.ts), written in large chunks: PollLog's
  // per-tick batching is built for a trickle of lookups, not 20,000 lines at once.
  const out = await open(temp, 'w');
  let journeys = 0;
  let polls = 0;
  // A write may take fewer bytes than given (a nearly full disk): the rest follows, or it throws.
  const writeAll = async (lines: string[]) => {
    const bytes = Buffer.from(lines.join(''), 'utf8');
    for (let done = 0; done < bytes.length; ) done += (await out.write(bytes, done)).bytesWritten;
  };
  try {
    let chunk: string[] = [];
    const endMs = options.now ?? Date.now();
    for await (const { journey, polls: made } of historyPolls({
      config: loadNetworkConfig(options.configDir), calendar: loadCalendar(options.configDir), places: loadPlaces(options.configDir),
      shipments: options.shipments, days: options.days, seed: options.seed ?? 1, endMs,
    })) {
      journeys++;
      // Journeys still under way are left out: the embedded poller would re-poll them from the
      // sandbox, whose answer for the number is another journey (a free number's own).
      if (made.length === 0 || journey.closedAt >= endMs) continue;
      for (const poll of journey.closedAt >= endMs - SEED_ALL_POLLS_DAYS * DAY_MS ? made : made.slice(-1)) {
        const line: LoggedPoll = { mode: 'test', poll };
        chunk.push(`${JSON.stringify(line)}\n`);
        polls++;
      }
      if (chunk.length >= 1000) {
        await writeAll(chunk);
        chunk = [];
      }
    }
    await writeAll(chunk);
    // On disk before the rename: a power cut after it must not find the log named but empty.
    await out.sync();
  } finally {
    await out.close();
  }
  if (!commitSeed(temp, pollLogPath(dataDir))) {
    rmSync(temp, { force: true });
    return { journeys: 0, polls: 0, redone };
  }
  return { journeys, polls, redone };
}

/**
 * Makes the whole seed the log, only while the log holds nothing: a log that got lines meanwhile
 * (a `sandbox history --into-stores` run, say) is never replaced. False when it was not a first
 * start any more.
 */
function commitSeed(temp: string, log: string): boolean {
  if (!existsSync(log)) {
    // link, not rename: it fails (EEXIST) instead of replacing a log created since the check.
    try {
      linkSync(temp, log);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return commitSeed(temp, log);
      throw err;
    }
    rmSync(temp);
  } else if (statSync(log).size === 0) {
    renameSync(temp, log);
  } else {
    return false;
  }
  // The new name survives a power cut too, so the next start does not seed a second time.
  syncDir(dirname(log));
  return true;
}
