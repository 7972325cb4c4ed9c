/**
 * The same SQL on a current ClickHouse engine: chDB (ClickHouse embedded in-process, installed into
 * test/chdb by scripts/test.sh) runs every migration, every statement of the catalogue of what the
 * code sends (test/clickhouse-statements.json, kept complete by the recording test) and every
 * query of docs/analysts.md. The services tests run the same statements on ClickHouse 18.16.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closureRow } from '../lib/clickhouse/lanes-closures.ts';
import { loadMigrations } from '../lib/clickhouse/migrate.ts';
import { bindQueryParams } from '../lib/clickhouse/params.ts';
import { seededRandom } from '../lib/random/seeded-random.ts';
import { loadCatalogue, type CatalogueEntry } from './clickhouse-catalogue.ts';

interface ChdbSession {
  query(sql: string, format?: string): string;
  cleanup(): void;
}

const CHDB_DIR = join(import.meta.dirname, 'chdb');
if (!existsSync(join(CHDB_DIR, 'node_modules/chdb'))) {
  throw new Error('chDB is not installed: `npm test` installs it (or run: npm ci --prefix test/chdb)');
}
const { Session } = createRequire(join(CHDB_DIR, 'package.json'))('chdb') as { Session: new (path?: string) => ChdbSession };

const QUERIES = [...readFileSync(join(import.meta.dirname, '../docs/analysts.md'), 'utf8').matchAll(/```sql (q\d+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!] as const);
/** Tables first, then inserts (each with a row of its data), so queries and commands meet rows. */
const rank = (entry: CatalogueEntry) => (/^CREATE\b/i.test(entry.sql) ? 0 : { insert: 1, query: 2, command: 3 }[entry.kind]);
const catalogue = loadCatalogue().sort((a, b) => rank(a) - rank(b));
/**
 * OPTIMIZE ... PARTITION is sent with optimize_throw_if_noop for the months a replay wrote; here
 * that month may hold no part, which the engine answers with this code after checking the statement.
 */
const NOTHING_TO_OPTIMIZE = 388;

let dir: string;
let session: ChdbSession;

/** Runs `sql` with the call's settings set for the session, then back to their defaults. */
function run(sql: string, settings: Record<string, unknown> = {}, format?: string): string {
  const names = Object.keys(settings);
  for (const name of names) session.query(`SET ${name} = ${JSON.stringify(settings[name]).replace(/"/g, "'")}`);
  try {
    return session.query(sql, format);
  } finally {
    for (const name of names) session.query(`SET ${name} = DEFAULT`);
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'chdb-'));
  session = new Session(dir);
  session.query('CREATE DATABASE IF NOT EXISTS tracking');
  session.query('USE tracking');
});

afterAll(() => {
  session?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe(`current ClickHouse (chDB)`, () => {
  it('is a current engine, not 18.16', () => {
    const version = run('SELECT version() AS v', {}, 'JSONEachRow');
    expect(Number(/"v":"(\d+)\./.exec(version)?.[1])).toBeGreaterThanOrEqual(25);
  });

  it('applies every migration, in order', () => {
    for (const migration of loadMigrations()) {
      for (const [index, statement] of migration.statements.entries()) {
        expect(() => run(statement), `${migration.file} statement ${index + 1}`).not.toThrow();
      }
    }
    expect(run("SELECT count() AS n FROM system.tables WHERE database = 'tracking' AND name = 'lane_stats'", {}, 'JSONEachRow')).toMatch(/"n":"?1"?/);
  });

  it('has a catalogue of the statements the code sends', () => {
    expect(catalogue.length).toBeGreaterThan(0);
  });

  it.each(catalogue.map((entry) => [`${entry.from}: ${entry.key.slice(0, 100)}`, entry] as const))('runs %s', (_name, entry) => {
    if (entry.kind === 'insert') {
      expect(entry.row, 'an INSERT is catalogued with a row of its data').toBeDefined();
      run(`${entry.sql}\n${entry.row}`, entry.settings);
    } else if (/^OPTIMIZE\b/.test(entry.sql)) {
      try {
        run(entry.sql, entry.settings);
      } catch (err) {
        expect((err as Error).message).toContain(`Code: ${NOTHING_TO_OPTIMIZE}.`);
      }
    } else {
      run(entry.sql, entry.settings, entry.kind === 'query' ? 'JSONEachRow' : undefined);
    }
  });

  it("runs every query of docs/analysts.md, and those on lane_closures find the seeded shipments", () => {
    const random = seededRandom(3);
    const nowS = Math.floor(Date.now() / 1000);
    const rows = Array.from({ length: 60 }, (_, i) => {
      const delivered = i % 5 !== 0;
      return closureRow(
        {
          lane: `delhivery:110:${560 + (i % 3)}`, carrier: 'delhivery', awb: `CUR${i}`, mode: 'live', outcome: delivered ? 'delivered' : 'rto',
          closedAtS: nowS - 3600 - Math.floor(random() * 20 * 86_400), transitDays: delivered ? 1 + Math.floor(random() * 500) / 100 : null,
          onTime: delivered ? (i % 2 === 0 ? 1 : 0) : null, firstAttempt: delivered ? (i % 3 === 0 ? 0 : 1) : null,
          ndrReasons: i % 4 === 0 ? ['customer_unavailable', 'refused'] : [], version: 1,
        },
        nowS * 1000,
      );
    });
    run(`INSERT INTO lane_closures FORMAT JSONEachRow\n${rows.map((r) => JSON.stringify(r)).join('\n')}`);
    expect(QUERIES.length).toBeGreaterThanOrEqual(10);
    for (const [name, sql] of QUERIES) {
      const result = (() => {
        try {
          // The questions take the mode and the window's end as parameters; the seeded closures are live ones, ending now.
          return run(bindQueryParams(sql, { mode: 'live', as_of: new Date(nowS * 1000).toISOString().slice(0, 19).replace('T', ' ') }), {}, 'JSONEachRow');
        } catch (err) {
          throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
        }
      })();
      if (/FROM lane_closures/.test(sql) && !/FROM lane_stats/.test(sql)) expect(result.trim(), name).not.toBe('');
    }
  });
});
