/**
 * Tests only: records every SQL statement the code sends through a ClickHouse client, so that
 * test/clickhouse-current.test.ts can run each of them on a current ClickHouse engine (chDB) as well
 * as on the 18.16 server the services tests use. Switched on by CLICKHOUSE_RECORD_SQL=<file>
 * (scripts/test.sh sets it for full runs); createClickHouseClient then wraps its client here.
 *
 * One JSON line per statement shape not yet written by this process: the normalized text (literals,
 * list lengths and the test databases' names taken out: the catalogue's key), one concrete example
 * that runs as it was sent, the caller's file, and for an INSERT the first row of its data. Calls
 * made by test files and test helpers are left out: the catalogue is of what the product sends.
 */
import { mkdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from '@clickhouse/client';
import { appendToFile } from '../kv/files.ts';

export interface RecordedStatement {
  /** Normalized text: the catalogue's key. */
  key: string;
  /** query: rows come back (JSONEachRow); command: DDL/DML without rows; insert: with data. */
  kind: 'query' | 'command' | 'insert';
  /** The statement as it was sent, the test database renamed `tracking`. */
  sql: string;
  /** clickhouse_settings of the call, if any. */
  settings?: Record<string, unknown>;
  /** INSERT only: the first JSONEachRow line of its data. */
  row?: string;
  /** Repository-relative file of the product code that sent it. */
  from: string;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Databases the tests create (createTestDatabase and friends) all stand for `tracking`. */
const TEST_DATABASE = /\btracking_test_\w+/g;

/** The statement with the test database's name replaced by `tracking`. */
export function withTrackingDatabase(sql: string): string {
  return sql.replace(TEST_DATABASE, 'tracking');
}

/**
 * The statement's shape: comments go, string and number literals become `?`, a list of them one
 * `?`, a list of tuples one tuple, whitespace one space. Two calls that differ only in values share a key.
 */
export function normalizeStatement(sql: string): string {
  let s = withTrackingDatabase(sql)
    // Literals and comments in one pass, so a quote inside a comment opens no literal.
    .replace(/'(?:[^'\\]|\\.|'')*'|--[^\n]*/g, (m) => (m.startsWith('--') ? ' ' : '?'))
    .replace(/(?<![\w.$])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w])/gi, '?')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1')
    .trim();
  for (let previous = ''; previous !== s; ) {
    previous = s;
    s = s.replace(/\?(?:,\?)+/g, '?').replace(/(\([^()]*\))(?:,\1)+/g, '$1');
  }
  return s;
}

/** The first frame of the stack outside this file and the client library, relative to the repository. */
function callerFile(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  for (const frame of frames) {
    const match = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?$/.exec(frame.trim());
    if (!match) continue;
    const file = match[1]!.replace(/^file:\/\//, '');
    if (file === fileURLToPath(import.meta.url) || file.endsWith('/lib/clickhouse/client.ts') || file.includes('/node_modules/')) continue;
    return relative(ROOT, file);
  }
  return '(unknown)';
}

/** Test files and test support (testutil/ folders, test/) query the database to check results. */
function isTestCode(file: string): boolean {
  return /\.test\.ts$|(^|\/)testutil\/|^test\//.test(file);
}

/** The client itself, or when CLICKHOUSE_RECORD_SQL names a file, the client recording into it. */
export function recordingWhenAsked(client: ClickHouseClient): ClickHouseClient {
  // Not in EnvSchema on purpose: only the test command sets it, and no deployment should.
  // eslint-disable-next-line no-restricted-properties -- a test switch, read where the client is made
  const file = process.env.CLICKHOUSE_RECORD_SQL;
  return file ? recordingClient(client, file) : client;
}

/** Wraps `client` so that every statement shape is appended to `file` once per process. */
export function recordingClient(client: ClickHouseClient, file: string): ClickHouseClient {
  const seen = new Set<string>();
  mkdirSync(dirname(file), { recursive: true });
  const record = (entry: Omit<RecordedStatement, 'key' | 'from' | 'sql'> & { sql: string }, from: string) => {
    if (isTestCode(from)) return;
    const sql = withTrackingDatabase(entry.sql.trim());
    const key = normalizeStatement(sql);
    if (seen.has(key)) return;
    seen.add(key);
    const line: RecordedStatement = {
      key, kind: entry.kind, sql, from, ...(entry.settings ? { settings: entry.settings } : {}), ...(entry.row ? { row: entry.row } : {}),
    };
    // One write of one line: appends from parallel test processes do not interleave.
    appendToFile(file, `${JSON.stringify(line)}\n`);
  };
  const settingsOf = (params: { clickhouse_settings?: Record<string, unknown> }) =>
    params.clickhouse_settings && Object.keys(params.clickhouse_settings).length > 0 ? params.clickhouse_settings : undefined;

  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'query' || property === 'command') {
        return (params: { query: string; clickhouse_settings?: Record<string, unknown> }) => {
          record({ kind: property, sql: params.query, settings: settingsOf(params) }, callerFile());
          return (value as (p: unknown) => unknown).call(target, params);
        };
      }
      if (property === 'insert') {
        return (params: { table: string; values: unknown; columns?: unknown; clickhouse_settings?: Record<string, unknown> }) => {
          const first = Array.isArray(params.values) ? (params.values[0] as unknown) : undefined;
          record(
            {
              kind: 'insert', sql: `INSERT INTO ${params.table} FORMAT JSONEachRow`, settings: settingsOf(params),
              row: first === undefined ? undefined : JSON.stringify(first),
            },
            callerFile(),
          );
          return (value as (p: unknown) => unknown).call(target, params);
        };
      }
      if (property === 'exec') {
        return (params: { query: string; values?: unknown; clickhouse_settings?: Record<string, unknown> }) => {
          const from = callerFile();
          const base = { sql: params.query, settings: settingsOf(params) };
          if (!(params.values instanceof Readable)) {
            record({ kind: /^\s*INSERT\b/i.test(params.query) ? 'insert' : 'command', ...base }, from);
            return (value as (p: unknown) => unknown).call(target, params);
          }
          // The data is a stream: pass it on unchanged, noting its first line on the way.
          const source = params.values;
          let noted = false;
          const values = Readable.from(
            (async function* () {
              for await (const chunk of source) {
                if (!noted) {
                  noted = true;
                  record({ kind: 'insert', ...base, row: Buffer.from(chunk as Buffer).toString('utf8').split('\n')[0] }, from);
                }
                yield chunk as Buffer;
              }
            })(),
            { objectMode: false },
          );
          return (value as (p: unknown) => unknown).call(target, { ...params, values });
        };
      }
      return value.bind(target);
    },
  });
}
