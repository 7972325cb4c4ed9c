/**
 * The embedded raw-poll log on real files: a torn last line (a crash mid-write) is cut at the
 * writer's first append, so the polls appended after it survive restarts; a damaged line in the
 * middle is skipped and counted; a reader never changes the file.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makePoll, scan } from '../testutil/polls.ts';
import { PollLog, pollLogPath, type LoggedPoll } from './poll-log.ts';
import { cutTornTail } from './torn-tail.ts';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'poll-log-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const logged = (awb: string, mode: LoggedPoll['mode'] = 'live'): LoggedPoll => ({
  mode, poll: makePoll({ awb, scans: [scan({ raw_status: 'Manifested', occurred_at: '2026-11-20T10:00:00+05:30' })] }),
});
const line = (entry: LoggedPoll) => `${JSON.stringify(entry)}\n`;

/** What a start does: open the log, read it whole. */
async function readBack(options: { warnings?: string[] } = {}): Promise<{ log: PollLog; awbs: string[]; damaged: number[] }> {
  const log = new PollLog(dir, { warn: (message) => options.warnings?.push(message) });
  const awbs: string[] = [];
  const damaged: number[] = [];
  for await (const { poll } of log.read((n) => damaged.push(n))) awbs.push(poll.awb);
  return { log, awbs, damaged };
}

describe('PollLog', () => {
  it('a torn last line is cut at the first append: the next poll survives two restarts', async () => {
    const whole = line(logged('1000000000001')) + line(logged('1000000000002'));
    const torn = line(logged('1000000000003')).slice(0, 57);
    writeFileSync(pollLogPath(dir), whole + torn);

    // The start after the crash: reads what is whole, then logs a new poll.
    const warnings: string[] = [];
    const first = await readBack({ warnings });
    expect(first).toMatchObject({ awbs: ['1000000000001', '1000000000002'], damaged: [] });
    const next = logged('2000000000001');
    first.log.append(next);
    await first.log.flush();
    expect(warnings).toEqual([`${pollLogPath(dir)}: dropped a torn last line (${torn.length} bytes, a crash mid-write) so new polls start on a line of their own`]);

    // Restart 1: the new poll is there on a line of its own, the half line is gone.
    const second = await readBack({ warnings });
    expect(second).toMatchObject({ awbs: ['1000000000001', '1000000000002', '2000000000001'], damaged: [] });
    expect(readFileSync(pollLogPath(dir), 'utf8')).toBe(whole + line(next));
    second.log.append(logged('2000000000002'));
    await second.log.flush();

    // Restart 2: both new polls, nothing damaged, and nothing more cut.
    const third = await readBack({ warnings });
    expect(third).toMatchObject({ awbs: ['1000000000001', '1000000000002', '2000000000001', '2000000000002'], damaged: [] });
    expect(warnings).toHaveLength(1);
  });

  it('a log that is only a torn line is cut to nothing; its first poll then reads back', async () => {
    writeFileSync(pollLogPath(dir), '{"mode":"live","po');
    const log = new PollLog(dir, { warn: () => {} });
    log.append(logged('3000000000001'));
    await log.flush();
    expect((await readBack()).awbs).toEqual(['3000000000001']);
  });

  it('a reader leaves a torn last line in place (it may be a line being written) and does not count it', async () => {
    const text = line(logged('1000000000001')) + '{"mode":"live","poll":{"sch';
    writeFileSync(pollLogPath(dir), text);
    const { awbs, damaged } = await readBack();
    expect(awbs).toEqual(['1000000000001']);
    expect(damaged).toEqual([]);
    expect(readFileSync(pollLogPath(dir), 'utf8')).toBe(text);
  });

  it('a damaged line in the middle is skipped and counted; the others are read', async () => {
    writeFileSync(pollLogPath(dir), line(logged('1000000000001')) + '{"mode":"live","poll":{"oops\n' + '\n' + line(logged('1000000000002', 'test')));
    const { log, awbs, damaged } = await readBack();
    expect(awbs).toEqual(['1000000000001', '1000000000002']);
    expect(damaged).toEqual([2]);
    // Not a torn tail: the writer cuts nothing.
    const size = statSync(pollLogPath(dir)).size;
    const next = logged('2000000000001');
    log.append(next);
    await log.flush();
    expect(statSync(pollLogPath(dir)).size).toBe(size + line(next).length);
    const modes: string[] = [];
    for await (const entry of new PollLog(dir).read()) modes.push(entry.mode);
    expect(modes).toEqual(['live', 'test', 'live']);
  });

  it('reads lines whose characters span read chunks (non-ASCII text)', async () => {
    const entries = Array.from({ length: 400 }, (_, i) => ({
      mode: 'live' as const,
      poll: makePoll({ awb: String(4000000000000 + i), scans: [scan({ raw_status: 'मुंबई हब पर पहुँचा '.repeat(20), occurred_at: '2026-11-20T10:00:00+05:30' })] }),
    }));
    writeFileSync(pollLogPath(dir), entries.map(line).join(''));
    const read: LoggedPoll[] = [];
    for await (const entry of new PollLog(dir).read()) read.push(entry);
    expect(read).toEqual(entries);
  });
});

describe('PollLog.readFrom', () => {
  it('gives each poll\'s end offset, goes on from one, and ends past the last whole line (damaged ones too)', async () => {
    const entries = ['5000000000001', '5000000000002', '5000000000003'].map((awb) => logged(awb));
    // A multi-byte character in a line: offsets count bytes, not characters.
    entries[1]!.poll.scans[0]!.location = 'मुंबई';
    const text = line(entries[0]!) + line(entries[1]!) + 'not json\n' + line(entries[2]!) + 'torn';
    writeFileSync(pollLogPath(dir), text);
    const log = new PollLog(dir, { warn: () => {} });
    const ends: number[] = [];
    let end = -1;
    for await (const entry of log.readFrom(0, { onEnd: (offset) => { end = offset; } })) ends.push(entry.end);
    const bytes = (s: string) => Buffer.byteLength(s);
    const first = bytes(line(entries[0]!));
    const second = first + bytes(line(entries[1]!));
    expect(ends).toEqual([first, second, second + bytes('not json\n') + bytes(line(entries[2]!))]);
    expect(end).toBe(bytes(text) - bytes('torn'));

    const rest: string[] = [];
    const damaged: number[] = [];
    for await (const entry of log.readFrom(first, { onDamaged: (n) => damaged.push(n) })) rest.push(entry.poll.awb);
    expect(rest).toEqual(['5000000000002', '5000000000003']);
    expect(damaged).toEqual([2]);

    // appendedBytes counts what this PollLog appended, in bytes.
    log.append(entries[1]!);
    expect(log.appendedBytes).toBe(bytes(line(entries[1]!)));
    await log.flush();
  });
});

describe('cutTornTail', () => {
  const path = () => join(dir, 'lines.ndjson');

  it('leaves a file that ends in a newline, an empty file and no file alone', async () => {
    writeFileSync(path(), 'a\nb\n');
    expect(await cutTornTail(path())).toBe(0);
    expect(readFileSync(path(), 'utf8')).toBe('a\nb\n');
    writeFileSync(path(), '');
    expect(await cutTornTail(path())).toBe(0);
    expect(await cutTornTail(join(dir, 'absent.ndjson'))).toBe(0);
  });

  it('cuts a torn line longer than one backward read, back to the last newline', async () => {
    const torn = 'x'.repeat(200_000);
    writeFileSync(path(), 'a\n');
    appendFileSync(path(), torn);
    expect(await cutTornTail(path())).toBe(torn.length);
    expect(readFileSync(path(), 'utf8')).toBe('a\n');
    writeFileSync(path(), torn);
    expect(await cutTornTail(path())).toBe(torn.length);
    expect(statSync(path()).size).toBe(0);
  });
});
