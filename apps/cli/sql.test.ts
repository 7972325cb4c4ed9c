/**
 * `cli sql` for an analyst on the embedded default: with nothing listening at CLICKHOUSE_URL it says
 * what to start and how the history gets there; its tables show numbers as the guide does (4
 * decimals) and its titles as the guide writes them ("3. Title"), in the list too.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { shownValue } from './commands/format.ts';
import { guideQuestions } from './commands/guide.ts';
import { formatTable, runSql } from './commands/sql.ts';

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runSql(args, { env, stdout: (t) => { out += t; }, stderr: (t) => { err += t; } });
  return { code, out, err };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('cli sql', () => {
  it('without ClickHouse: exit 1, the connection error, then what to start and how to load the history', async () => {
    const { code, out, err } = await run(['1', '--mode', 'test'], { CLICKHOUSE_URL: `http://127.0.0.1:${await closedPort()}` });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(/^error: ClickHouse at http:\/\/127\.0\.0\.1:\d+ \(database tracking\) could not be reached: .*ECONNREFUSED/);
    for (const step of ['npm run services -- up', 'npm run migrate', 'npm run cli -- store move', 'npm run cli -- sandbox history', 'npm run normalizer']) {
      expect(err).toContain(step);
    }
  });

  it('numbers to 4 decimals as the guide shows them; whole numbers, text and NULL as they are', () => {
    expect(shownValue(2.0798611111111107)).toBe('2.0799');
    expect(shownValue('0.85294117647058820')).toBe('0.8529');
    expect(shownValue(1.5)).toBe('1.5');
    expect(shownValue('34')).toBe('34');
    expect(shownValue(null)).toBe('NULL');
    expect(shownValue('delhivery:110:560')).toBe('delhivery:110:560');
    expect(formatTable(['carrier', 'p50'], [{ carrier: 'bluedart', p50: 2.0798611111111107 }, { carrier: 'dtdc', p50: 5.083333333333333 }]))
      .toBe('carrier      p50\n--------  ------\nbluedart  2.0799\ndtdc      5.0833\n');
  });

  it('titles as the guide writes them: "N. Title", in --list too', async () => {
    const questions = guideQuestions();
    const { code, out } = await run(['--list']);
    expect(code).toBe(0);
    expect(out.trimEnd().split('\n')).toEqual(questions.map((q, i) => `${i + 1}. ${q.title}`));
  });
});
