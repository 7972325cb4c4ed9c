/** `npm run cli -- backup <dir>`: the command line around lib/backup (its copy is tested there). */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedPaymentStore, embeddedPaymentsDir } from '../../lib/billing/index.ts';
import { runCli } from './commands/cli.ts';
import { USAGE } from './commands/usage.ts';

let root: string;
beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'cli-backup-')); });
afterEach(() => { rmSync(root, { recursive: true, force: true }); });

async function cli(args: string[], dataDir: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { env: { DATA_DIR: dataDir }, stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; } });
  return { code, stdout, stderr };
}

describe('cli backup', () => {
  it('copies DATA_DIR into the directory given while its store is open, and says what it wrote', async () => {
    const dataDir = join(root, 'data');
    const store = new EmbeddedPaymentStore(embeddedPaymentsDir(dataDir));
    await store.saveAttempt({ reference_id: 'rn_1', link_id: 'plink_1', short_url: 'http://x/pay/plink_1', key_prefix: 'trk_test_Ab3dE9x', plan: 'growth' });
    const run = await cli(['backup', join(root, 'copy')], dataDir);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/copied .*data → .*copy: 2 files/);
    const summary = JSON.parse(run.stdout) as { files: { path: string }[]; left_out: string[] };
    expect(summary.files.map((f) => f.path).sort()).toEqual(['payments/journal-1.ndjson', 'payments/snapshot.json']);
    expect(readFileSync(join(root, 'copy', 'payments', 'journal-1.ndjson'), 'utf8')).toContain('plink_1');
    await store.close();
  });

  it('refuses a second copy into the same directory (exit 1) and a missing directory (exit 2)', async () => {
    const dataDir = join(root, 'data');
    await new EmbeddedPaymentStore(embeddedPaymentsDir(dataDir)).close();
    expect((await cli(['backup', join(root, 'copy')], dataDir)).code).toBe(0);
    const again = await cli(['backup', join(root, 'copy')], dataDir);
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toMatch(/is not empty/);
    const none = await cli(['backup'], dataDir);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/takes one directory/);
  });

  it('is listed in the usage text', () => {
    expect(USAGE).toMatch(/^ {2}backup <dir>$/m);
  });
});
