/**
 * Replay against the embedded default (`npm start`). It keeps no events: every shipment, lane
 * sample and poller work item is re-derived at start from its raw-poll log (DATA_DIR/polls.ndjson)
 * with the rules it starts with. So what it "stores" is the log read through a rule set, and:
 *
 * - the rules it stored with are those the last `replay --apply` recorded in
 *   DATA_DIR/replay/applied-mapping.json (the whole mapping rule set, so it can be compiled again),
 *   or, before any apply, `config/` of this checkout (what `npm start` loads by default);
 * - `--diff` compares the current rules' events with the log's events under those rules;
 * - `--apply` records the current rules as the applied ones (one atomic file write: idempotent,
 *   nothing to resume). The running process keeps the rules it started with; it serves the new
 *   mapping after a restart with those rules in CONFIG_DIR (`config/` by default), when it
 *   re-derives everything from the log.
 */
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { MappingConfig } from '../config/index.ts';
import { compileRuleSet, type RuleSet } from '../normalize/index.ts';
import { loadProduct } from '../product/index.ts';
import { pollLogPath } from '../store/poll-log.ts';
import { EventSet, mappedEventsOf } from './fresh-events.ts';
import { parseReplayLine, type ModePoll } from './logged-line.ts';

export interface AppliedMapping {
  mapping_version: string;
  applied_at: string;
  /** How many logged polls the apply's replay read. */
  polls: number;
  mappings: MappingConfig;
}

export function appliedMappingPath(dataDir: string): string {
  return join(dataDir, 'replay', 'applied-mapping.json');
}

/** The mapping recorded by the last apply, or null when none was. Throws on a damaged file. */
export function readAppliedMapping(dataDir: string): AppliedMapping | null {
  const path = appliedMappingPath(dataDir);
  if (!existsSync(path)) return null;
  const value = JSON.parse(readFileSync(path, 'utf8')) as AppliedMapping;
  const version = compileRuleSet(value.mappings).mappingVersion;
  if (version !== value.mapping_version) throw new Error(`${path}: its rules hash to ${version}, not the recorded ${value.mapping_version}`);
  return value;
}

/** Written to a temporary file and renamed: a crash leaves the old record or the new one. */
export function writeAppliedMapping(dataDir: string, record: AppliedMapping): void {
  const path = appliedMappingPath(dataDir);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(record, null, 1) + '\n');
  renameSync(tmp, path);
}

export interface EmbeddedBaseline {
  rules: RuleSet;
  /** Where they came from, for people. */
  source: string;
}

/** The rules the embedded default's data counts as stored with (see the top of this file). */
export function embeddedBaseline(dataDir: string, baselineConfigDir?: string): EmbeddedBaseline {
  if (baselineConfigDir) return { rules: loadProduct(baselineConfigDir).rules, source: `--baseline ${baselineConfigDir}` };
  const applied = readAppliedMapping(dataDir);
  if (applied) return { rules: compileRuleSet(applied.mappings), source: `${appliedMappingPath(dataDir)} (applied ${applied.applied_at})` };
  return { rules: loadProduct().rules, source: 'config/ (no apply recorded under DATA_DIR)' };
}

/** Every poll of the embedded log, oldest first; `onInvalid` gets each bad line (a crash mid-write). */
export async function* readEmbeddedLog(
  dataDir: string, resolveCarrier: (name: string) => string | null, onInvalid: (lineNumber: number, message: string) => void,
): AsyncGenerator<ModePoll> {
  const path = pollLogPath(dataDir);
  if (!existsSync(path)) throw new Error(`no raw-poll log at ${path} (DATA_DIR of the embedded default)`);
  let lineNumber = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    lineNumber++;
    if (!line.trim()) continue;
    const parsed = parseReplayLine(line, resolveCarrier);
    if (typeof parsed === 'string') onInvalid(lineNumber, parsed);
    else yield parsed;
  }
}

/**
 * The events the embedded default holds for the shipments in `replayed`: every logged poll of
 * them (whatever window was replayed) through `rules`, first producing poll winning per event_id.
 */
export async function storedEmbeddedEvents(
  dataDir: string, rules: RuleSet, replayed: EventSet, resolveCarrier: (name: string) => string | null,
): Promise<EventSet> {
  const stored = new EventSet();
  for await (const { poll } of readEmbeddedLog(dataDir, resolveCarrier, () => {})) {
    if (!replayed.hasShipment(poll.carrier, poll.awb)) continue;
    stored.add(mappedEventsOf(poll, rules));
  }
  return stored;
}
