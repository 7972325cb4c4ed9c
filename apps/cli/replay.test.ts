/** The replay command end to end: a real child process over a file of 10,000 polls (all carriers). */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrackingRecordSchema } from '../../lib/schemas/index.ts';
import { JOURNEYS, journeyPoll } from '../../lib/testutil/polls.ts';

const NODE = process.execPath; // node runs the TypeScript itself
const SCRIPT = join(import.meta.dirname, 'replay.ts');
const carriers = Object.keys(JOURNEYS);

function runReplay(args: string[], input?: string) {
  return spawnSync(NODE, [SCRIPT, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
}

describe('npm run replay', () => {
  it('replays 10,000 polls of 10 scans across all 11 carriers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-'));
    const polls = Array.from({ length: 10_000 }, (_, i) => journeyPoll(carriers[i % carriers.length]!, i));
    writeFileSync(join(dir, 'polls.ndjson'), polls.map((p) => JSON.stringify(p)).join('\n') + '\n');

    const run = runReplay(['--input', join(dir, 'polls.ndjson'), '--output', join(dir, 'out.ndjson')]);
    expect(run.stderr).toMatch(/10000 polls, 10000 records, 0 not found, 0 carrier errors, 0 invalid lines/);
    expect(run.status).toBe(0);

    const lines = readFileSync(join(dir, 'out.ndjson'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(10_000);
    lines.forEach((line, i) => {
      const { poll_id, ...record } = JSON.parse(line);
      expect(poll_id).toBe(polls[i]!.poll_id);
      const parsed = TrackingRecordSchema.parse(record);
      expect(parsed.carrier).toBe(polls[i]!.carrier);
      expect(parsed.status).toBe('delivered');
      expect(parsed.events).toHaveLength(10);
    });
  }, 120_000);

  it('a diff over a window with no polls names the span the stored polls cover', () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-empty-'));
    const polls = [1, 2, 3].map((i) => journeyPoll('ekart', i));
    writeFileSync(join(dir, 'polls.ndjson'), polls.map((poll) => JSON.stringify({ poll, mode: 'test' })).join('\n') + '\n');
    const run = spawnSync(NODE, [SCRIPT, '--from-embedded', '--diff', '--since', '2025-10-01', '--until', '2025-10-02', '--output', '-'], { encoding: 'utf8', env: { ...process.env, DATA_DIR: dir } });
    const times = polls.map((p) => Date.parse(p.polled_at)).sort((a, b) => a - b);
    expect(run.stderr).toContain('compared 0 stored events');
    expect(run.stderr).toContain(`replay: no polls in the window (2025-10-01T00:00:00.000Z to 2025-10-02T00:00:00.000Z); the 3 stored polls in the embedded log (${dir}/polls.ndjson) `
      + `were polled from ${new Date(times[0]!).toISOString()} to ${new Date(times[2]!).toISOString()}: choose --since/--until within that span`);
  });

  it('names bad lines on stderr, keeps going, and exits non-zero', () => {
    const good = JSON.stringify(journeyPoll('ekart', 1));
    const run = runReplay(['--input', '-', '--output', '-'], `${good}\nnot json\n${good}\n`);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/line 2: not valid JSON/);
    expect(run.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('explains usage errors in one line, with exit status 2', () => {
    for (const [args, message] of [
      [[], /name a source: --input <file\|->, --from-embedded, --from-kafka or --from-clickhouse/],
      [['--input', '-', '--carrier', 'fedex'], /unknown carrier "fedex"/],
    ] as const) {
      const run = runReplay([...args], '');
      expect(run.status).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(message);
    }
  }, 30_000);

  it('--help documents every option with an example', () => {
    const run = runReplay(['--help']);
    expect(run.status).toBe(0);
    const options = ['--input', '--from-embedded', '--from-kafka', '--from-clickhouse', '--since', '--until', '--carrier', '--output', '--diff', '--apply', '--yes', '--against', '--baseline', '--config', '--data-dir', '--database', '--topic'];
    for (const option of options) expect(run.stdout).toMatch(new RegExp(`e\\.g\\. [^\\n]*${option}`));
    expect(run.stdout).toMatch(/--quiet/);
  });

  it('reads the embedded default\'s log lines ({"poll": ..., "mode": ...}) as they are', () => {
    const poll = journeyPoll('dtdc', 3);
    const run = runReplay(['--input', '-'], `${JSON.stringify({ poll, mode: 'test' })}\n${JSON.stringify({ poll, mode: 'sandbox' })}\n`);
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ poll_id: poll.poll_id, status: 'delivered' });
    expect(run.stderr).toMatch(/line 2: embedded log line: "mode" must be "live" or "test"/);
  });
});
