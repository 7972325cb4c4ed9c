/**
 * The embedded start from a checkpoint (embedded.ts, checkpoint.ts) on real files: a checkpoint
 * plus the log's tail answers as a replay of the whole log does (the index's work list, every lane's
 * figures, the delivery model and an estimate); polls handled after a start are counted in the next
 * checkpoint's offset; a checkpoint that is truncated, has a flipped byte, another format version,
 * other rules or sits over a replaced log is ignored and rebuilt from the log, with the same
 * answers; a temporary file left by a kill mid-write is never read.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollLogPath } from '../store/poll-log.ts';
import { checkpointPath, checkpointTempPath, CHECKPOINT_VERSION, decodeCheckpoint } from './checkpoint.ts';
import { answersOf, historyLines, openBooks, writeLog, type Answers } from './testutil/books.ts';

const dirs: string[] = [];
const newDir = (name: string) => {
  const made = mkdtempSync(join(tmpdir(), `checkpoint-${name}-`));
  dirs.push(made);
  return made;
};
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

let lines: string[];
/** The answers of a replay of the whole log, with no checkpoint. */
let replayed: Answers;

beforeAll(async () => {
  lines = await historyLines(1500);
  const dir = newDir('replay');
  writeLog(dir, lines);
  replayed = answersOf(await openBooks(dir, { configDir: undefined }));
  // The comparison means something: figures, work, a model and an estimate to compare.
  expect(replayed.active.length).toBeGreaterThan(0);
  expect(replayed.lanes.filter((s) => s && s.sample_size > 0).length).toBeGreaterThan(10);
  expect(replayed.model.cells).toBeGreaterThan(0);
  expect(replayed.estimate.estimates.length).toBeGreaterThan(0);
}, 120_000);

/** A data dir whose log is the whole history and whose checkpoint was written by a start (and its close). */
async function withCheckpoint(name: string): Promise<string> {
  const dir = newDir(name);
  writeLog(dir, lines);
  const first = await openBooks(dir);
  expect(first.start).toMatchObject({ from: 'log', polls: lines.length, reason: 'none yet' });
  await first.close();
  return dir;
}

describe('embedded start from a checkpoint', () => {
  it('a checkpoint plus the log\'s tail answers as a replay of the whole log', { timeout: 60_000 }, async () => {
    const dir = newDir('tail');
    const cut = Math.floor(lines.length * 0.7);
    writeLog(dir, lines.slice(0, cut));
    const first = await openBooks(dir);
    expect(first.start).toMatchObject({ from: 'log', polls: cut });
    // Written at once by a start that replayed the whole log.
    expect(existsSync(checkpointPath(dir))).toBe(true);
    appendFileSync(pollLogPath(dir), lines.slice(cut).join(''));

    const second = await openBooks(dir);
    expect(second.start).toEqual({ from: 'checkpoint', polls: lines.length - cut });
    expect(second.logged.some((l) => l.includes(`${lines.length - cut} polls of the log's tail read`))).toBe(true);
    expect(answersOf(second)).toEqual(replayed);
  });

  it('polls handled after a start are covered by the checkpoint written at close: the next start reads no tail', { timeout: 60_000 }, async () => {
    const dir = newDir('live');
    const cut = Math.floor(lines.length * 0.5);
    writeLog(dir, lines.slice(0, cut));
    const first = await openBooks(dir);
    // As the in-process bus's subscriber does: append to the log, then handle.
    for (const line of lines.slice(cut)) {
      const { poll, mode } = JSON.parse(line) as { poll: never; mode: 'test' };
      first.pollLog.append({ poll, mode });
      first.index.handle(poll, mode);
    }
    await first.close();
    expect(statSync(pollLogPath(dir)).size).toBe(Buffer.byteLength(lines.join('')));

    const second = await openBooks(dir);
    expect(second.start).toEqual({ from: 'checkpoint', polls: 0 });
    expect(answersOf(second)).toEqual(replayed);
  });

  it('a checkpoint written after a rebuild covers the polls handled until then', { timeout: 60_000 }, async () => {
    const dir = newDir('rebuilt');
    writeLog(dir, lines.slice(0, 1000));
    const first = await openBooks(dir);
    for (const line of lines.slice(1000)) {
      const { poll, mode } = JSON.parse(line) as { poll: never; mode: 'test' };
      first.pollLog.append({ poll, mode });
      first.index.handle(poll, mode);
    }
    // The book's timer would call rebuild(); the checkpoint follows it (awaited here through a second call).
    first.predictions.rebuild();
    await first.checkpoint();
    const second = await openBooks(dir);
    expect(second.start).toEqual({ from: 'checkpoint', polls: 0 });
    expect(answersOf(second)).toEqual(replayed);
  });

  const damages: [string, (dir: string) => void, RegExp][] = [
    ['truncated', (dir) => { const b = readFileSync(checkpointPath(dir)); writeFileSync(checkpointPath(dir), b.subarray(0, b.length - 1000)); }, /truncated/],
    ['a flipped byte', (dir) => { const b = readFileSync(checkpointPath(dir)); b[Math.floor(b.length / 2)]! ^= 0x40; writeFileSync(checkpointPath(dir), b); }, /checksum/],
    ['another format version', (dir) => {
      const b = readFileSync(checkpointPath(dir));
      b.writeUInt32LE(CHECKPOINT_VERSION + 1, 8);
      writeFileSync(checkpointPath(dir), b);
    }, /format version/],
    ['not a checkpoint at all', (dir) => writeFileSync(checkpointPath(dir), ''), /no header/],
    ['over a replaced log (same size, other first poll)', (dir) => {
      const other = [...lines];
      [other[0], other[1]] = [other[1]!, other[0]!];
      writeLog(dir, other);
    }, /replaced/],
    ['over a log changed before its offset', (dir) => {
      const other = [...lines];
      [other[other.length - 1], other[other.length - 2]] = [other[other.length - 2]!, other[other.length - 1]!];
      writeLog(dir, other);
    }, /differs before byte/],
    ['over a shorter log', (dir) => writeLog(dir, lines.slice(0, lines.length - 10)), /shorter/],
  ];
  for (const [what, damage, reason] of damages) {
    it(`a checkpoint ${what} is ignored, rebuilt from the log, and answers as a replay`, { timeout: 60_000 }, async () => {
      const dir = await withCheckpoint('damaged');
      damage(dir);
      const expected = what.startsWith('over') ? answersOf(await openBooks(replayDirOf(dir), {})) : replayed;
      const opened = await openBooks(dir);
      expect(opened.start.from).toBe('log');
      expect(opened.start.reason).toMatch(reason);
      expect(opened.logged.filter((l) => l.includes('not loaded'))).toHaveLength(1);
      expect(answersOf(opened)).toEqual(expected);
      // And a good checkpoint is written in its place.
      expect('state' in decodeCheckpoint(readFileSync(checkpointPath(dir)))).toBe(true);
      expect((await openBooks(dir)).start).toEqual({ from: 'checkpoint', polls: 0 });
    });
  }

  it('a checkpoint made under other mapping rules is rebuilt', { timeout: 60_000 }, async () => {
    const dir = await withCheckpoint('rules');
    const opened = await openBooks(dir, { rules: { ...(await import('../product/index.ts')).loadProduct().rules, mappingVersion: 'other' } });
    expect(opened.start).toMatchObject({ from: 'log', reason: /other mapping rules/ });
  });

  it('a temp file left by a kill mid-write is never read: the last whole checkpoint is, and the temp goes', { timeout: 60_000 }, async () => {
    const dir = await withCheckpoint('killed');
    const whole = readFileSync(checkpointPath(dir));
    // Killed half way through writing the next one: half of a checkpoint in the temp file.
    writeFileSync(checkpointTempPath(dir), whole.subarray(0, whole.length >> 1));
    const opened = await openBooks(dir);
    expect(opened.start).toEqual({ from: 'checkpoint', polls: 0 });
    expect(existsSync(checkpointTempPath(dir))).toBe(false);
    expect(answersOf(opened)).toEqual(replayed);

    // Killed before the first checkpoint's rename: no checkpoint, only its temp file: a full replay.
    rmSync(checkpointPath(dir));
    writeFileSync(checkpointTempPath(dir), whole);
    const again = await openBooks(dir);
    expect(again.start).toMatchObject({ from: 'log', reason: 'none yet' });
    expect(answersOf(again)).toEqual(replayed);
  });
});

/** A copy of `dir`'s log alone (no checkpoint): what a replay of that log answers. */
function replayDirOf(dir: string): string {
  const copy = newDir('replay-of');
  copyFileSync(pollLogPath(dir), pollLogPath(copy));
  return copy;
}
