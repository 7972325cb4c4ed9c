/**
 * npm run migrate [-- --database <name>] [--dir <migrations dir>]
 * Applies the pending numbered SQL migrations to ClickHouse (CLICKHOUSE_URL, default
 * http://127.0.0.1:8123; database `tracking`, or CLICKHOUSE_DATABASE, or a path in the URL).
 * Creates the database when missing. Idempotent. Exit status 1 when a migration fails, 2 on a
 * usage error.
 */
import { parseArgs } from 'node:util';
import { resolveTarget } from '../../lib/clickhouse/client.ts';
import { migrate, MigrationError } from '../../lib/clickhouse/migrate.ts';
import { loadEnv } from '../../lib/config/index.ts';

const USAGE = 'usage: npm run migrate [-- --database <name>] [--dir <migrations dir>]';

async function main(): Promise<void> {
  let values;
  try {
    values = parseArgs({ options: { database: { type: 'string' }, dir: { type: 'string' } }, strict: true }).values;
  } catch (err) {
    process.stderr.write(`migrate: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  let target;
  try {
    const env = loadEnv();
    target = resolveTarget(env.CLICKHOUSE_URL, values.database ?? env.CLICKHOUSE_DATABASE);
  } catch (err) {
    process.stderr.write(`migrate: ${(err as Error).message}\n`);
    process.exit(2);
  }
  process.stdout.write(`migrate: ${target.url} database ${target.database}\n`);
  const result = await migrate(target, { dir: values.dir, log: (line) => process.stdout.write(`migrate: ${line}\n`) });
  process.stdout.write(
    result.applied.length === 0
      ? `migrate: up to date (${result.alreadyApplied.length} already applied)\n`
      : `migrate: applied ${result.applied.length}, ${result.alreadyApplied.length} already applied\n`,
  );
}

main().catch((err: unknown) => {
  const message = err instanceof MigrationError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`migrate: ${message}\n`);
  process.exit(1);
});
