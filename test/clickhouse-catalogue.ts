/**
 * The catalogue of SQL statements the code sends to ClickHouse (test/clickhouse-statements.json):
 * one runnable example per statement shape, taken from what the services tests recorded
 * (lib/clickhouse/statement-recorder.ts). test/clickhouse-current.test.ts runs every entry on the current
 * engine; test/clickhouse-statements.recording.test.ts fails when a run recorded a shape the
 * catalogue lacks. Statements of migration files are left out: the current-engine test runs the files.
 *
 * Add what a run recorded:  node test/clickhouse-catalogue.ts [recording.jsonl]
 * (default .test-results/clickhouse-sql.jsonl, written by `npm test`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeStatement, type RecordedStatement } from '../lib/clickhouse/statement-recorder.ts';

const ROOT = join(import.meta.dirname, '..');
export const CATALOGUE_FILE = join(ROOT, 'test/clickhouse-statements.json');
export const RECORDING_FILE = join(ROOT, '.test-results/clickhouse-sql.jsonl');

export type CatalogueEntry = Omit<RecordedStatement, 'key'> & { key: string };

export function loadCatalogue(): CatalogueEntry[] {
  return JSON.parse(readFileSync(CATALOGUE_FILE, 'utf8')) as CatalogueEntry[];
}

/**
 * Statements of migration files, which the runner sends as commands: the repository's (run from
 * the files by the current-engine test) and the ones tests write into copies (bad SQL on purpose).
 * The runner's own statements (its database and bookkeeping table) are catalogued.
 */
function isMigrationFileStatement(entry: RecordedStatement): boolean {
  return entry.from === 'lib/clickhouse/migrate.ts' && entry.kind === 'command' && !/^CREATE (DATABASE|TABLE IF NOT EXISTS schema_migrations)\b/.test(entry.sql);
}

/** What a run recorded, one entry per shape (keys recomputed, migrations' statements left out). */
export function readRecording(file: string = RECORDING_FILE): CatalogueEntry[] {
  if (!existsSync(file)) return [];
  const byKey = new Map<string, CatalogueEntry>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const recorded = JSON.parse(line) as RecordedStatement;
    const key = normalizeStatement(recorded.sql);
    if (isMigrationFileStatement(recorded) || byKey.has(key)) continue;
    byKey.set(key, { ...recorded, key });
  }
  return [...byKey.values()];
}

/** The catalogue with the recording's new shapes added, sorted by sending file and key. */
export function merged(catalogue: CatalogueEntry[], recording: CatalogueEntry[]): CatalogueEntry[] {
  const byKey = new Map(catalogue.map((e) => [e.key, e]));
  for (const entry of recording) if (!byKey.has(entry.key)) byKey.set(entry.key, entry);
  return [...byKey.values()].sort((a, b) => a.from.localeCompare(b.from) || a.key.localeCompare(b.key));
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const recording = readRecording(process.argv[2] ?? RECORDING_FILE);
  const catalogue = existsSync(CATALOGUE_FILE) ? loadCatalogue() : [];
  const next = merged(catalogue, recording);
  writeFileSync(CATALOGUE_FILE, `${JSON.stringify(next, null, 2)}\n`);
  console.log(`${CATALOGUE_FILE}: ${next.length} statements (${next.length - catalogue.length} new, ${recording.length} in the recording)`);
}
