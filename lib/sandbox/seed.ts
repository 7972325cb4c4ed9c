/**
 * The embedded default's first start: an empty DATA_DIR gets a test-mode history in its raw-poll
 * log (DATA_DIR/polls.ndjson), which the runtime then reads like any logged polls, so a newcomer's
 * first lookups show a benchmark and `GET /v1/lanes` shows carriers. Live keys never see it: every
 * line is logged for mode `test` (lane keys `test:…`, lib/lanes).
 */
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
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
 * polls made while they moved too (the config's `history.polls_per_journey`).
 */
export async function seedEmbeddedHistory(dataDir: string, options: SeedOptions): Promise<{ journeys: number; polls: number }> {
  if (options.shipments <= 0 || !isFirstStart(dataDir)) return { journeys: 0, polls: 0 };
  mkdirSync(dataDir, { recursive: true });
  // The log's own line format (lib/store/poll-log.ts), written in large chunks: PollLog's
  // per-tick batching is built for a trickle of lookups, not 20,000 lines at once.
  const out = createWriteStream(pollLogPath(dataDir), { flags: 'a' });
  let journeys = 0;
  let polls = 0;
  let chunk: string[] = [];
  const drain = async () => {
    if (chunk.length && !out.write(chunk.join(''))) await once(out, 'drain');
    chunk = [];
  };
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
    if (chunk.length >= 1000) await drain();
  }
  await drain();
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return { journeys, polls };
}
