/** `npm run cli -- sql …` in process against a test database: what it printed, having exited 0. */
import { expect } from 'vitest';
import { runCli } from '../../apps/cli/commands/cli.ts';
import { TEST_CLICKHOUSE_URL } from '../../lib/clickhouse/testutil/database.ts';

export function sqlCli(database: string): (...argv: string[]) => Promise<string> {
  return async (...argv) => {
    let out = '';
    let err = '';
    const code = await runCli(['sql', ...argv], { env: { CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CLICKHOUSE_DATABASE: database }, stdout: (t) => { out += t; }, stderr: (t) => { err += t; } });
    expect(code, err).toBe(0);
    return out;
  };
}
