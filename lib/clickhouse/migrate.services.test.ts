import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createClickHouseClient, resolveTarget } from './client.ts';
import { DEFAULT_MIGRATIONS_DIR, EARLIER_CHECKSUMS, migrate, MigrationError } from './migrate.ts';
import { dropDatabase, rowsOf, TEST_CLICKHOUSE_URL } from './testutil/database.ts';

const run = promisify(execFile);
const databases: string[] = [];
const dirs: string[] = [];

function freshTarget() {
  const target = resolveTarget(TEST_CLICKHOUSE_URL, `tracking_test_mig_${Math.random().toString(36).slice(2, 10)}`);
  databases.push(target.database);
  return target;
}

function copyOfMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  dirs.push(dir);
  cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

afterAll(async () => {
  for (const db of databases) await dropDatabase(db);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('migrate (real ClickHouse)', () => {
  it('creates the database and the tables on a fresh server, then is idempotent', async () => {
    const target = freshTarget();
    const lines: string[] = [];
    const first = await migrate(target, { log: (l) => lines.push(l) });
    expect(first.applied).toEqual(['0001_carrier_polls.sql', '0002_events.sql', '0003_shipments.sql', '0004_lane_benchmarks.sql', '0005_webhook_deliveries.sql', '0006_lane_closures.sql', '0007_lane_touches.sql', '0008_lane_touches_view.sql', '0009_lane_stats.sql', '0010_lane_refreshes.sql', '0011_lane_closures_backfill.sql', '0012_replay_checkpoints.sql', '0013_events_location_ids.sql', '0014_events_drop_old_ids.sql', '0015_analysis_shipments.sql', '0016_payments.sql', '0017_prediction.sql', '0018_prediction_position.sql', '0019_prediction_detail.sql', '0020_prediction_booked_days.sql', '0021_prediction_pace.sql', '0022_prediction_calendar_days.sql']);
    // One statement a file, but the prediction model's four tables come in one file, and its position columns in two tables.
    const statements = (f: string) => (f === '0017_prediction.sql' ? '4 statements' : f === '0018_prediction_position.sql' ? '2 statements' : '1 statement');
    expect(lines).toEqual(first.applied.map((f) => `applied ${f} (${statements(f)})`));

    const client = createClickHouseClient(target);
    try {
      const tables = await rowsOf<{ name: string; engine: string; sorting_key?: string }>(
        client,
        `SELECT name, engine FROM system.tables WHERE database = currentDatabase() ORDER BY name`,
      );
      expect(tables.map((t) => [t.name, t.engine])).toEqual([
        ['analysis_shipments', 'ReplacingMergeTree'],
        ['carrier_polls', 'ReplacingMergeTree'],
        ['events', 'ReplacingMergeTree'],
        ['lane_benchmarks', 'ReplacingMergeTree'],
        ['lane_closures', 'ReplacingMergeTree'],
        ['lane_refreshes', 'MergeTree'],
        ['lane_stats', 'ReplacingMergeTree'],
        ['lane_touches', 'MergeTree'],
        ['lane_touches_view', 'MaterializedView'],
        ['payments', 'ReplacingMergeTree'],
        ['prediction_cells', 'MergeTree'],
        ['prediction_models', 'MergeTree'],
        ['prediction_observations', 'ReplacingMergeTree'],
        ['prediction_thresholds', 'MergeTree'],
        ['replay_checkpoints', 'ReplacingMergeTree'],
        ['schema_migrations', 'ReplacingMergeTree'],
        ['shipments', 'ReplacingMergeTree'],
        ['webhook_deliveries', 'ReplacingMergeTree'],
      ]);
      const columns = await rowsOf<{ table: string; name: string; type: string }>(
        client,
        `SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table IN ('events', 'shipments', 'lane_benchmarks') ORDER BY table, name`,
      );
      const typeOf = (table: string, name: string) => columns.find((c) => c.table === table && c.name === name)?.type;
      // contracts.md names, with UTC DateTime columns.
      for (const name of ['event_id', 'carrier', 'awb', 'status', 'code', 'status_text', 'description', 'facility', 'location', 'raw_status', 'mapping_version']) {
        expect(typeOf('events', name), `events.${name}`).toBe('String');
      }
      expect(typeOf('events', 'occurred_at')).toBe("DateTime('UTC')");
      expect(typeOf('events', 'reason_code')).toBe('Nullable(String)');
      expect(typeOf('shipments', 'transit_days')).toBe('Nullable(Float64)');
      expect(typeOf('shipments', 'delivered_at')).toBe("Nullable(DateTime('UTC'))");
      expect(typeOf('shipments', 'is_rto')).toBe('UInt8');
      expect(typeOf('lane_benchmarks', 'median_transit_days')).toBe('Float64');
      expect(typeOf('lane_benchmarks', 'sample_size')).toBe('UInt32');

      const again = await migrate(target);
      expect(again.applied).toEqual([]);
      expect(again.alreadyApplied).toHaveLength(first.applied.length);
      const recorded = await rowsOf<{ version: number; file: string }>(client, 'SELECT version, file FROM schema_migrations ORDER BY version');
      expect(recorded.map((r) => [Number(r.version), r.file])).toEqual(first.applied.map((f) => [Number(f.slice(0, 4)), f]));
    } finally {
      await client.close();
    }
  });

  it('stops at a bad migration with its file name and ClickHouse message, keeping the ones before', async () => {
    const target = freshTarget();
    const dir = copyOfMigrations();
    writeFileSync(join(dir, '0098_broken.sql'), 'CREATE TABLE IF NOT EXISTS ok_one (x UInt8) ENGINE = Memory;\nCREATE TABLE broken (x UInt8) ENGINE = NoSuchEngine();\n');
    writeFileSync(join(dir, '0099_after.sql'), 'CREATE TABLE after_broken (x UInt8) ENGINE = Memory;');
    const error = await migrate(target, { dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    const { message, file, clickhouseMessage } = error as MigrationError;
    expect(file).toBe('0098_broken.sql');
    expect(message).toMatch(/^0098_broken\.sql: statement 2 of 2 failed: .*NoSuchEngine/);
    expect(clickhouseMessage).toMatch(/NoSuchEngine/);

    const client = createClickHouseClient(target);
    try {
      const recorded = await rowsOf<{ file: string }>(client, 'SELECT file FROM schema_migrations ORDER BY version');
      expect(recorded.map((r) => r.file)).toEqual(['0001_carrier_polls.sql', '0002_events.sql', '0003_shipments.sql', '0004_lane_benchmarks.sql', '0005_webhook_deliveries.sql', '0006_lane_closures.sql', '0007_lane_touches.sql', '0008_lane_touches_view.sql', '0009_lane_stats.sql', '0010_lane_refreshes.sql', '0011_lane_closures_backfill.sql', '0012_replay_checkpoints.sql', '0013_events_location_ids.sql', '0014_events_drop_old_ids.sql', '0015_analysis_shipments.sql', '0016_payments.sql', '0017_prediction.sql', '0018_prediction_position.sql', '0019_prediction_detail.sql', '0020_prediction_booked_days.sql', '0021_prediction_pace.sql', '0022_prediction_calendar_days.sql']);
      const tables = await rowsOf<{ name: string }>(client, "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('ok_one', 'after_broken')");
      expect(tables.map((t) => t.name)).toEqual(['ok_one']);

      // Fixed, it finishes: the first statement re-runs harmlessly (IF NOT EXISTS).
      writeFileSync(join(dir, '0098_broken.sql'), 'CREATE TABLE IF NOT EXISTS ok_one (x UInt8) ENGINE = Memory;\nCREATE TABLE broken (x UInt8) ENGINE = Memory;\n');
      const fixed = await migrate(target, { dir });
      expect(fixed.applied).toEqual(['0098_broken.sql', '0099_after.sql']);

      // An applied migration edited afterwards is refused.
      writeFileSync(join(dir, '0099_after.sql'), 'CREATE TABLE after_broken (x UInt16) ENGINE = Memory;');
      await expect(migrate(target, { dir })).rejects.toThrow(/0099_after\.sql: changed after it was applied/);
    } finally {
      await client.close();
    }
  });

  it('takes a migration applied in an earlier text of the file (EARLIER_CHECKSUMS) as applied', async () => {
    const target = freshTarget();
    await migrate(target);
    const client = createClickHouseClient(target);
    try {
      // As an installation that ran 0011 before its subqueries got aliases has it recorded.
      const [earlier] = EARLIER_CHECKSUMS['0011_lane_closures_backfill.sql']!;
      await client.command({ query: `INSERT INTO schema_migrations VALUES (11, '0011_lane_closures_backfill.sql', '${earlier}', now() + 1)` });
      const again = await migrate(target);
      expect(again.applied).toEqual([]);
      expect(again.alreadyApplied).toContain('0011_lane_closures_backfill.sql');
    } finally {
      await client.close();
    }
  });

  it('npm run migrate: prints what it applied, then that it is up to date; exit 1 naming a bad file', async () => {
    const target = freshTarget();
    const cli = resolve(DEFAULT_MIGRATIONS_DIR, '../apps/cli/migrate.ts');
    const env = { ...process.env, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL };
    const first = await run(process.execPath, [cli, '--database', target.database], { env });
    expect(first.stdout).toContain('migrate: applied 0001_carrier_polls.sql (1 statement)');
    expect(first.stdout).toContain('migrate: applied 22, 0 already applied');
    const second = await run(process.execPath, [cli, '--database', target.database], { env });
    expect(second.stdout).toContain('migrate: up to date (22 already applied)');

    const dir = copyOfMigrations();
    writeFileSync(join(dir, '0098_typo.sql'), 'CREAT TABLE x (a UInt8) ENGINE = Memory;');
    const failed = await run(process.execPath, [cli, '--database', target.database, '--dir', dir], { env }).catch((e: { code: number; stderr: string }) => e);
    expect('code' in failed ? failed.code : 0).toBe(1);
    expect(failed.stderr).toMatch(/migrate: 0098_typo\.sql: statement 1 of 1 failed: .*Syntax error/);
  });
});
