/**
 * Numbered SQL migrations for the pipeline's ClickHouse database.
 *
 * Files are `migrations/NNNN_name.sql` at the repository root, applied in number order. They name
 * tables without a database: the runner connects with the target database as the session default,
 * so tests can migrate a throw-away database and `npm run migrate` migrates `tracking`.
 * ClickHouse runs one statement per request and has no transactions, so a file is split into
 * statements and each migration should be written re-runnable (CREATE ... IF NOT EXISTS): if a
 * statement fails half way, fixing the file and running again finishes it.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clickHouseErrorInfo, createClickHouseClient, type ClickHouseClient, type ClickHouseTarget } from './client.ts';
import { toClickHouseDateTime } from './datetime.ts';
import { sqlIdentifier } from './sql.ts';

export const DEFAULT_MIGRATIONS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../migrations');

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  version: number;
  /** File name, e.g. `0002_events.sql`. */
  file: string;
  statements: string[];
  /** sha256 of the file text: an applied migration that changed afterwards is reported. */
  checksum: string;
}

export class MigrationError extends Error {
  readonly file: string | null;
  readonly clickhouseMessage: string | null;
  constructor(
    message: string,
    file: string | null,
    clickhouseMessage: string | null = null,
  ) {
    super(message);
    this.file = file;
    this.clickhouseMessage = clickhouseMessage;
    this.name = 'MigrationError';
  }
}

/**
 * Splits SQL text into statements at top-level semicolons, leaving semicolons inside quotes,
 * back-quoted or double-quoted identifiers and comments alone. Comment-only pieces are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let hasCode = false;
  let i = 0;
  const push = () => {
    if (hasCode) statements.push(current.trim());
    current = '';
    hasCode = false;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      current += sql.slice(i, stop);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end === -1) throw new MigrationError('unterminated /* comment', null);
      current += sql.slice(i, end + 2);
      i = end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) throw new MigrationError(`unterminated ${c} quote`, null);
        const d = sql[j]!;
        if (d === '\\') j += 2;
        else if (d === c && sql[j + 1] === c) j += 2;
        else if (d === c) break;
        else j++;
      }
      current += sql.slice(i, j + 1);
      hasCode = true;
      i = j + 1;
    } else if (c === ';') {
      push();
      i++;
    } else {
      if (!/\s/.test(c)) hasCode = true;
      current += c;
      i++;
    }
  }
  push();
  return statements;
}

/** Reads `NNNN_name.sql` files in number order; other files are ignored, duplicate numbers refused. */
export function loadMigrations(dir: string = DEFAULT_MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  const seen = new Map<number, string>();
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.sql')) continue;
    const match = FILE_NAME.exec(file);
    if (!match) throw new MigrationError(`${file}: migration files are named NNNN_lowercase_name.sql`, file);
    const version = Number(match[1]);
    const other = seen.get(version);
    if (other) throw new MigrationError(`${file}: number ${match[1]} is also used by ${other}`, file);
    seen.set(version, file);
    const text = readFileSync(join(dir, file), 'utf8');
    let statements: string[];
    try {
      statements = splitStatements(text);
    } catch (err) {
      throw new MigrationError(`${file}: ${(err as Error).message}`, file);
    }
    if (statements.length === 0) throw new MigrationError(`${file}: no SQL statement`, file);
    migrations.push({ version, file, statements, checksum: createHash('sha256').update(text).digest('hex') });
  }
  return migrations.sort((a, b) => a.version - b.version);
}

/**
 * Earlier texts of migrations that were edited after release, by file (sha256 of each text). An
 * installation that applied one of these is up to date: such an edit may change only how a
 * statement is written, never what it does, so nothing needs to run again.
 */
export const EARLIER_CHECKSUMS: Readonly<Record<string, readonly string[]>> = {
  // Without aliases for its joined subqueries, which ClickHouse after 2018 requires (issue 22).
  '0011_lane_closures_backfill.sql': ['f5445f2075a9ef77db04421a2fe6fa2935860f1fec2969d492cdf3cf3e5fbf4d'],
};

/** The runner's own bookkeeping table, created before anything else (it cannot be a migration). */
const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS schema_migrations
(
    version UInt32,
    file String,
    checksum String,
    applied_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree(applied_at)
ORDER BY version`;

export interface AppliedMigration {
  version: number;
  file: string;
  checksum: string;
}

export interface MigrateOptions {
  /** Default: the repository's `migrations/`. */
  dir?: string;
  /** Progress lines ("applied 0002_events.sql (1 statement)"). */
  log?: (line: string) => void;
}

export interface MigrateResult {
  database: string;
  applied: string[];
  alreadyApplied: string[];
}

async function appliedMigrations(client: ClickHouseClient): Promise<Map<number, AppliedMigration>> {
  const result = await client.query({
    // Re-running after a concurrent run may have recorded a version twice: argMax keeps one.
    query: 'SELECT version AS v, argMax(file, applied_at) AS f, argMax(checksum, applied_at) AS c FROM schema_migrations GROUP BY version ORDER BY version',
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ v: number | string; f: string; c: string }>();
  return new Map(rows.map((r) => [Number(r.v), { version: Number(r.v), file: r.f, checksum: r.c }]));
}

function fail(file: string | null, action: string, err: unknown): never {
  const { code, message } = clickHouseErrorInfo(err);
  const where = file ? `${file}: ` : '';
  throw new MigrationError(`${where}${action} failed: ${message}${code !== null ? ` (ClickHouse code ${code})` : ''}`, file, message);
}

/**
 * Creates the database when missing, then applies the migrations not yet recorded in
 * `schema_migrations`, in order, recording each after all its statements succeeded. Idempotent.
 * Stops at the first failure with a MigrationError naming the file and ClickHouse's message.
 */
export async function migrate(target: ClickHouseTarget, options: MigrateOptions = {}): Promise<MigrateResult> {
  const log = options.log ?? (() => {});
  const migrations = loadMigrations(options.dir);
  const database = sqlIdentifier(target.database);

  const admin = createClickHouseClient({ url: target.url, database: 'default' });
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  } catch (err) {
    fail(null, `creating database ${target.database}`, err);
  } finally {
    await admin.close();
  }

  const client = createClickHouseClient(target);
  try {
    try {
      await client.command({ query: BOOKKEEPING });
    } catch (err) {
      fail(null, 'creating schema_migrations', err);
    }
    const done = await appliedMigrations(client);
    const result: MigrateResult = { database: target.database, applied: [], alreadyApplied: [] };
    for (const migration of migrations) {
      const recorded = done.get(migration.version);
      if (recorded) {
        if (recorded.checksum !== migration.checksum && !EARLIER_CHECKSUMS[migration.file]?.includes(recorded.checksum)) {
          throw new MigrationError(
            `${migration.file}: changed after it was applied (as ${recorded.file}); add a new numbered migration instead of editing an applied one`,
            migration.file,
          );
        }
        result.alreadyApplied.push(migration.file);
        continue;
      }
      for (const [index, statement] of migration.statements.entries()) {
        try {
          await client.command({ query: statement });
        } catch (err) {
          fail(migration.file, `statement ${index + 1} of ${migration.statements.length}`, err);
        }
      }
      try {
        await client.insert({
          table: 'schema_migrations',
          values: [{ version: migration.version, file: migration.file, checksum: migration.checksum, applied_at: toClickHouseDateTime(Date.now()) }],
          format: 'JSONEachRow',
        });
      } catch (err) {
        fail(migration.file, 'recording the migration', err);
      }
      result.applied.push(migration.file);
      log(`applied ${migration.file} (${migration.statements.length} statement${migration.statements.length === 1 ? '' : 's'})`);
    }
    return result;
  } finally {
    await client.close();
  }
}
