/**
 * `npm run cli -- analyze shipments.csv` against the real API (embedded store, sandbox carriers,
 * listening on a loopback port): the analysis submitted, followed to completion, a summary table
 * printed and the report written.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisSchema } from '../../lib/analyzer/index.ts';
import { startApiHarness, type ApiHarness } from '../api/testutil/harness.ts';
import { runCli } from './commands/cli.ts';

describe('cli analyze', () => {
  let h: ApiHarness;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    h = await startApiHarness();
    base = await h.listen();
    dir = await mkdtemp(join(tmpdir(), 'cli-analyze-'));
  });
  afterAll(async () => {
    await h?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const run = async (args: string[], env: Record<string, string> = {}) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, { env, stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; } });
    return { code, stdout, stderr };
  };

  it('submits a CSV, waits for the analysis and prints the summary; the report is written', async () => {
    const { key } = await h.createKey({ plan: 'growth', mode: 'test', burst_per_second: 1000 });
    const file = join(dir, 'november.csv');
    await writeFile(file, 'awb,carrier,payment_mode\n1234567010104,delhivery,cod\n1234567020112,delhivery,cod\n12345670004,bluedart,prepaid\nbad!,delhivery,cod\n');
    const res = await run(['analyze', file, '--url', base], { TRACKING_API_KEY: key });
    expect(res.stderr).toMatch(/3 shipments accepted, 1 rows rejected \(first: row 4 invalid_awb\)/);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Analysis "november.csv"');
    expect(res.stdout).toMatch(/3 shipments: 3 found \(2 delivered, 1 RTO/);
    expect(res.stdout).toMatch(/^delhivery\s+2\s+50\.0 %\s+50\.0 %/m);
    expect(res.stdout).toContain(`Report written to ${file}.report.json`);
    const written = AnalysisSchema.parse(JSON.parse(await readFile(`${file}.report.json`, 'utf8')));
    expect(written.report!.totals.shipments).toBe(3);
  });

  it('says why it cannot analyse: no key, a plan without the analyzer', async () => {
    const file = join(dir, 'x.csv');
    await writeFile(file, 'awb\n1234567010104\n');
    expect((await run(['analyze', file, '--url', base])).code).toBe(2);
    const { key } = await h.createKey({ plan: 'starter', mode: 'test' });
    const refused = await run(['analyze', file, '--url', base, '--key', key]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/growth and business.*plan_feature_unavailable, HTTP 403/);
  });
});
