import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MIGRATIONS_DIR, loadMigrations, splitStatements } from './migrate.ts';

const dirs: string[] = [];

function copyOfMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  dirs.push(dir);
  cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('splitStatements', () => {
  it('splits at top-level semicolons only', () => {
    const sql = `-- a comment; with a semicolon
CREATE TABLE a (s String DEFAULT 'x;y', t String DEFAULT 'it\\'s;') ENGINE = Memory;
/* block; comment */ CREATE TABLE \`b;c\` (x UInt8) ENGINE = Memory ;
-- trailing comment only;
`;
    expect(splitStatements(sql)).toEqual([
      "-- a comment; with a semicolon\nCREATE TABLE a (s String DEFAULT 'x;y', t String DEFAULT 'it\\'s;') ENGINE = Memory",
      '/* block; comment */ CREATE TABLE `b;c` (x UInt8) ENGINE = Memory',
    ]);
  });

  it('refuses unterminated quotes and comments', () => {
    expect(() => splitStatements("SELECT 'open")).toThrow(/unterminated ' quote/);
    expect(() => splitStatements('SELECT 1 /* open')).toThrow(/unterminated/);
  });

  it('reads the repository migrations in number order', () => {
    const migrations = loadMigrations();
    expect(migrations.map((m) => m.file)).toEqual(['0001_carrier_polls.sql', '0002_events.sql', '0003_shipments.sql', '0004_lane_benchmarks.sql', '0005_webhook_deliveries.sql', '0006_lane_closures.sql', '0007_lane_touches.sql', '0008_lane_touches_view.sql', '0009_lane_stats.sql', '0010_lane_refreshes.sql', '0011_lane_closures_backfill.sql', '0012_replay_checkpoints.sql', '0013_events_location_ids.sql', '0014_events_drop_old_ids.sql', '0015_analysis_shipments.sql', '0016_payments.sql', '0017_prediction.sql', '0018_prediction_position.sql', '0019_prediction_detail.sql', '0020_prediction_booked_days.sql', '0021_prediction_pace.sql', '0022_prediction_calendar_days.sql']);
    for (const m of migrations) expect(m.statements.length).toBeGreaterThan(0);
  });

  it('refuses badly named and duplicate-numbered files', () => {
    const dir = copyOfMigrations();
    writeFileSync(join(dir, '0002_other.sql'), 'SELECT 1;');
    expect(() => loadMigrations(dir)).toThrow(/0002_other\.sql: number 0002 is also used by 0002_events\.sql/);
    rmSync(join(dir, '0002_other.sql'));
    writeFileSync(join(dir, '5_bad-name.sql'), 'SELECT 1;');
    expect(() => loadMigrations(dir)).toThrow(/5_bad-name\.sql: migration files are named NNNN_lowercase_name\.sql/);
  });
});
