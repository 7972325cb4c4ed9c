/**
 * `backup <dir>`: a consistent copy of the embedded store's DATA_DIR, taken while the service runs
 * (lib/backup). Restoring is starting a stopped service on the copy.
 */
import { parseArgs } from 'node:util';
import { backupDataDir } from '../../../lib/backup/index.ts';
import type { RunCommand } from './command.ts';
import type { CliIo } from './io.ts';

export const BACKUP_USAGE = `Usage: npm run cli -- backup <dir>

Copies the embedded store under DATA_DIR (default ./data) into <dir> (new or empty, outside
DATA_DIR) while the service runs: keys and counts, payments, Idempotency-Key answers, push's and
the analyzer's state, the trial throttle, the admin token and the raw-poll log, each as it was at
one moment of the copy. To restore: stop the service, put <dir> where DATA_DIR was, start it.
Not copied: DATA_DIR/records (delivered records, refilled by lookups), outbox (mail sent) and
spool (the distributed start's polls on their way to Kafka). With REDIS_URL and ClickHouse, back
those up with their own tools (docs/operators/backup.md).
Prints what it wrote (JSON). Exit codes: 0 copied, 1 failed, 2 usage error.
`;

export async function runBackup(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, strict: true, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n\n${BACKUP_USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout(BACKUP_USAGE);
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    io.stderr(`error: backup takes one directory, got ${parsed.positionals.length}\n\n${BACKUP_USAGE}`);
    return 2;
  }
  const dataDir = io.env.DATA_DIR ?? './data';
  const target = parsed.positionals[0]!;
  try {
    const summary = backupDataDir(dataDir, target);
    const bytes = summary.files.reduce((sum, f) => sum + f.bytes, 0);
    io.stderr(`copied ${dataDir} → ${target}: ${summary.files.length} files, ${bytes} bytes` +
      `${summary.left_out.length ? `; left out: ${summary.left_out.join(', ')}` : ''}\n`);
    io.stdout(`${JSON.stringify(summary, null, 2)}\n`);
    return 0;
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

export const backupCommand: RunCommand = { words: ['backup'], run: runBackup };
