/**
 * The operators' documented commands run as written. Each shell block of docs/operators/*.md is
 * one of: `sh example` with a `json <status>` answer after it (an HTTP call:
 * test/docs-examples.test.ts runs it against the embedded API), `sh example` alone (a command run
 * here with `sh -c` from the repository root, as a reader types it, and it must exit 0), or
 * `sh not-run: <reason>` (it cannot run in a test: installs packages, starts the shared services,
 * serves until stopped). Any other shell block fails this file, so a new command cannot slip in
 * untested; a reason naming a test file must name one that exists.
 *
 * Environment: the services this project starts (`npm run services -- env`, what the pages' own
 * `eval` line exports) and a ClickHouse database of this run's own (CLICKHOUSE_DATABASE), so
 * `npm run migrate` and replay's diff touch no other run's tables.
 */
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countOf, createTestDatabase, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { documentationFiles, ROOT, shellBlocks } from './support/markdown.ts';

const run = promisify(execFile);
const PAGES = documentationFiles().filter((f) => f.startsWith('docs/operators/'));
const BLOCKS = PAGES.flatMap((page) => shellBlocks(page).map((block) => ({ page, block })));
const COMMANDS = BLOCKS.filter((b) => b.block.kind === 'command');
/** Files the commands write into the repository root (replay's --output): removed afterwards unless they were there before. */
const WRITTEN = ['records.ndjson'].filter((f) => !existsSync(join(ROOT, f)));

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
}, 60_000);

afterAll(async () => {
  await db?.drop();
  for (const f of WRITTEN) rmSync(join(ROOT, f), { force: true });
});

describe('docs/operators: every shell block runs in a test or says why it cannot', () => {
  it('no unmarked shell block; every not-run has a reason and names only test files that exist; there are commands to run', () => {
    expect(BLOCKS.filter((b) => b.block.kind === 'unmarked').map((b) => `${b.page}: ${b.block.command.split('\n')[0]}`)).toEqual([]);
    for (const { page, block } of BLOCKS) {
      if (block.kind !== 'not-run') continue;
      expect(block.reason.length, `${page}: ${block.command}`).toBeGreaterThan(10);
      for (const file of block.reason.match(/test\/[\w./-]+\.ts/g) ?? []) expect(existsSync(join(ROOT, file)), `${page} names ${file}`).toBe(true);
    }
    expect(COMMANDS.length).toBeGreaterThanOrEqual(2);
  });

  it.each(COMMANDS.map((c) => [`${c.page}: ${c.block.command.split('\n')[0]}`, c.block.command] as const))('%s', { timeout: 300_000 }, async (_title, command) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CLICKHOUSE_DATABASE: db.target.database };
    const { stdout, stderr } = await run('sh', ['-c', command], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024, timeout: 280_000 });
    // What each command is for, seen in its effect, not only its exit status.
    if (/npm run migrate/.test(command)) expect(await countOf(db.client, 'SELECT count() AS c FROM system.tables WHERE database = currentDatabase() AND name = \'lane_stats\'')).toBe(1);
    if (/--output records\.ndjson/.test(command)) expect(existsSync(join(ROOT, 'records.ndjson')), stderr).toBe(true);
    if (/--diff/.test(command)) expect(`${stdout}${stderr}`).toMatch(/compared \d+ stored events/);
  });
});
