/**
 * The analysts' backtest page (docs/analysts/backtest.md) runs as written: each of its shell blocks
 * is an `sh example`, run in order with `sh -c` from the repository root as a reader types it, with
 * the environment a newcomer has (no Kafka, ClickHouse or Redis configured: the embedded default).
 * Each must exit 0, print no warning (the split lies inside the history, enough is scored) and show
 * what it is for. The files they write are removed afterwards unless they were there before.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, shellBlocks } from './support/markdown.ts';

const run = promisify(execFile);
const PAGE = 'docs/analysts/backtest.md';
const BLOCKS = shellBlocks(PAGE);
const WRITTEN = ['history.jsonl', 'p.jsonl', 'summary.json', 'backtest-data'].filter((f) => !existsSync(join(ROOT, f)));

/** The reader's environment: none of the distributed pipeline's addresses (a test run exports them). */
function newcomerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['KAFKA_BROKERS', 'CLICKHOUSE_URL', 'REDIS_URL', 'REDIS_CLUSTER_URL', 'DATA_DIR']) delete env[name];
  return env;
}

afterAll(() => {
  for (const f of WRITTEN) rmSync(join(ROOT, f), { recursive: true, force: true });
});

describe(`${PAGE}: every command runs as written`, () => {
  it('has only runnable shell blocks, and the page’s commands', () => {
    expect(BLOCKS.filter((b) => b.kind !== 'command').map((b) => b.command)).toEqual([]);
    const text = BLOCKS.map((b) => b.command).join('\n');
    for (const needed of ['sandbox history', '--polls history.jsonl', '--json > summary.json', 'backtest-chart.ts', '--from-embedded']) expect(text).toContain(needed);
  });

  // In order: later blocks read what earlier ones wrote.
  it.each(BLOCKS.map((b, i) => [`${i + 1}: ${b.command.split('\n')[0]}`, b.command] as const))('%s', { timeout: 300_000 }, async (_title, command) => {
    const { stdout, stderr } = await run('sh', ['-c', command], { cwd: ROOT, env: newcomerEnv(), maxBuffer: 64 * 1024 * 1024, timeout: 280_000 });
    expect(stderr).not.toMatch(/warning:/i);
    if (/--out history\.jsonl/.test(command)) expect(readFileSync(join(ROOT, 'history.jsonl'), 'utf8').split('\n').length).toBeGreaterThan(10_000);
    if (/predict backtest --polls history\.jsonl --split \S+ --predictions/.test(command)) {
      expect(stdout).toMatch(/Backtest split at 2026-05-16T18:30:00.000Z/);
      expect(existsSync(join(ROOT, 'p.jsonl'))).toBe(true);
    }
    if (/backtest-chart\.ts/.test(command)) expect(stdout).toMatch(/^\| overall \| \d+ \|/m);
    if (/--from-embedded/.test(command)) {
      // The embedded log keeps several polls a journey: thousands scored, not ten.
      const scored = Number(/^overall\s+(\d+)/m.exec(stdout)?.[1]);
      expect(scored, stdout).toBeGreaterThan(1000);
    }
  });
});
