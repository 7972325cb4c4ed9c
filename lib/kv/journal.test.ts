/** The journal every embedded store keeps its state in: crash safety, tested once here. */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appendToFile } from './files.ts';
import { Journal } from './journal.ts';

/** What the journal asked of the file system, in order, by file name: the fsync points. */
const calls: string[] = [];
const fds = new Map<number, string>();
/** Set by a test: the next append's write stores only part of its bytes, then fails (a full disk). */
let failNextWrite = false;
/**
 * Set by a test: group fsyncs (the asynchronous `fsync`) wait in `heldSyncs` until the test lets
 * them finish, so it can see who waits for which fsync; `error` makes that one fail.
 */
let holdSyncs = false;
const heldSyncs: ((error?: Error) => void)[] = [];

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    openSync: (path: string, flags: string | number) => {
      const fd = fs.openSync(path, flags);
      fds.set(fd, basename(path));
      const { O_TRUNC, O_APPEND } = fs.constants;
      const named = typeof flags === 'string' ? flags : [flags & O_TRUNC && 'trunc', flags & O_APPEND && 'append'].filter(Boolean).join('+');
      calls.push(`open ${basename(path)} ${named}`);
      return fd;
    },
    writeSync: (fd: number, buffer: Buffer, offset = 0) => {
      if (failNextWrite) {
        failNextWrite = false;
        fs.writeSync(fd, buffer, offset, Math.floor((buffer.length - offset) / 2));
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      }
      calls.push(`write ${fds.get(fd)}`);
      return fs.writeSync(fd, buffer, offset);
    },
    fsyncSync: (fd: number) => {
      calls.push(`fsync ${fds.get(fd)}`);
      fs.fsyncSync(fd);
    },
    fsync: (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => {
      calls.push(`group fsync ${fds.get(fd)}`);
      if (!holdSyncs) return fs.fsync(fd, callback);
      // Let go by the test: done at once, so the test's next turns see its callback's effects.
      heldSyncs.push((error) => {
        if (!error) fs.fsyncSync(fd);
        callback(error ?? null);
      });
    },
    renameSync: (from: string, to: string) => {
      calls.push(`rename ${basename(from)} ${basename(to)}`);
      fs.renameSync(from, to);
    },
  };
});

interface Entry {
  n: number;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'journal-'));
  calls.length = 0;
  holdSyncs = false;
  heldSyncs.length = 0;
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const files = () => readdirSync(dir).sort();
const open = () => Journal.open<Entry>(dir, {
  parse: (value) => {
    if (typeof (value as Entry).n !== 'number') throw new Error('not an entry');
    return value as Entry;
  },
});

describe('journal', () => {
  it('keeps a snapshot and the entries after it across a reopen; compaction starts the next generation', () => {
    const first = open();
    expect(first.snapshot).toBeNull();
    expect(first.entries).toEqual([]);
    expect(() => first.journal.append([{ n: 0 }], false)).toThrow(/compact first/);
    first.journal.compact(() => ({ total: 0 }));
    first.journal.append([{ n: 1 }, { n: 2 }], false);
    first.journal.append([{ n: 3 }], true);
    expect(first.journal.appended).toBe(3);
    expect(first.journal.appendedBytes).toBe(3 * '{"n":1}\n'.length);
    first.journal.close();
    expect(files()).toEqual(['journal-1.ndjson', 'snapshot.json']);

    const second = open();
    expect(second.snapshot).toEqual({ total: 0, generation: 1 });
    expect(second.entries).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    second.journal.compact((generation) => ({ total: 6, seen: generation }));
    expect(files()).toEqual(['journal-2.ndjson', 'snapshot.json']);
    second.journal.close();
    expect(open().snapshot).toEqual({ total: 6, seen: 2, generation: 2 });
  });

  it('drops a line torn by a crash mid-write and reads every line before it', () => {
    const { journal } = open();
    journal.compact(() => ({}));
    journal.append([{ n: 1 }, { n: 2 }], true);
    journal.close();
    appendToFile(join(dir, 'journal-1.ndjson'), '{"n":3');
    expect(open().entries).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('refuses to open a journal damaged before its last line, naming the file and line', () => {
    const { journal } = open();
    journal.compact(() => ({}));
    journal.append([{ n: 1 }], false);
    journal.close();
    appendToFile(join(dir, 'journal-1.ndjson'), 'not json\n{"n":2}\n');
    expect(() => open()).toThrow(/journal-1\.ndjson line 2 is damaged/);
    writeFileSync(join(dir, 'journal-1.ndjson'), '{"m":1}\n');
    expect(() => open()).toThrow(/line 1 is damaged: not an entry/);
  });

  it('fsyncs a durable append before it returns, and leaves the others to the OS', () => {
    const { journal } = open();
    journal.compact(() => ({}));
    calls.length = 0;
    journal.append([{ n: 1 }], false);
    expect(calls).toEqual(['write journal-1.ndjson']);
    journal.append([{ n: 2 }, { n: 3 }], true);
    expect(calls).toEqual(['write journal-1.ndjson', 'write journal-1.ndjson', 'fsync journal-1.ndjson']);
    journal.close();
  });

  it('compacts by temp file, fsync, rename and directory fsync, the next journal made before the rename', () => {
    const { journal } = open();
    journal.compact(() => ({}));
    journal.append([{ n: 1 }], false);
    calls.length = 0;
    journal.compact(() => ({ total: 1 }));
    expect(calls).toEqual([
      'open journal-2.ndjson trunc+append',
      'open snapshot.json.tmp w', 'fsync snapshot.json.tmp', 'rename snapshot.json.tmp snapshot.json',
      // The directory: the rename and the new journal's name survive a power cut.
      `open ${basename(dir)} r`, `fsync ${basename(dir)}`,
    ]);
    journal.close();
  });

  it('cuts a failed write off again, so the next append does not follow half a line', () => {
    const { journal } = open();
    journal.compact(() => ({}));
    journal.append([{ n: 1 }], false);
    failNextWrite = true;
    expect(() => journal.append([{ n: 2 }, { n: 3 }], true)).toThrow(/ENOSPC/);
    expect(readFileSync(join(dir, 'journal-1.ndjson'), 'utf8')).toBe('{"n":1}\n');
    journal.append([{ n: 4 }], false);
    journal.close();
    expect(open().entries).toEqual([{ n: 1 }, { n: 4 }]);
  });

  it('applies nothing twice when a crash came between a compaction and the old journal deleted', () => {
    const { journal } = open();
    journal.compact(() => ({}));
    journal.append([{ n: 1 }], false);
    const old = join(dir, 'old.ndjson');
    cpSync(join(dir, 'journal-1.ndjson'), old);
    journal.compact(() => ({ total: 1 }));
    journal.close();
    cpSync(old, join(dir, 'journal-1.ndjson'));
    const reopened = open();
    expect(reopened.snapshot).toEqual({ total: 1, generation: 2 });
    expect(reopened.entries).toEqual([]);
    reopened.journal.compact(() => ({ total: 1 }));
    reopened.journal.close();
    expect(files()).toEqual(['journal-3.ndjson', 'old.ndjson', 'snapshot.json']);
  });

  it('reads the previous layout (journal.ndjson, after a snapshot without a generation or alone) once', () => {
    // Push's files: a snapshot and the journal continuing it.
    writeFileSync(join(dir, 'snapshot.json'), '{"total":1}');
    writeFileSync(join(dir, 'journal.ndjson'), '{"n":2}\n{"n":3}\n{"n":');
    const push = open();
    expect(push.snapshot).toEqual({ total: 1 });
    expect(push.entries).toEqual([{ n: 2 }, { n: 3 }]);
    push.journal.compact(() => ({ total: 6 }));
    push.journal.close();
    expect(files()).toEqual(['journal-1.ndjson', 'snapshot.json']);
    expect(open().snapshot).toEqual({ total: 6, generation: 1 });

    // Payments' and idempotency's: the journal alone. A crash after the upgrade's snapshot was
    // written but before journal.ndjson was deleted: the journal is in the snapshot, not read again.
    rmSync(dir, { recursive: true });
    const alone = open();
    writeFileSync(join(dir, 'journal.ndjson'), '{"n":7}\n');
    expect(open().entries).toEqual([{ n: 7 }]);
    alone.journal.compact(() => ({ total: 7 }));
    alone.journal.close();
    writeFileSync(join(dir, 'journal.ndjson'), '{"n":7}\n');
    expect(open().entries).toEqual([]);
  });
});

/** Lets every callback and `setImmediate` queued so far run (the group fsync starts at the end of a turn). */
const turns = async (n = 3) => { for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve)); };
/** A promise's outcome so far, without waiting for it. */
const watch = (promise: Promise<void>) => {
  const seen: { state: 'waiting' | 'resolved' | 'rejected'; error?: unknown } = { state: 'waiting' };
  promise.then(() => { seen.state = 'resolved'; }, (error: unknown) => { seen.state = 'rejected'; seen.error = error; });
  return seen;
};

describe('journal group commit', () => {
  it('writes a commit at once and resolves it only after an fsync; commits of one turn share one fsync', async () => {
    const { journal } = open();
    journal.compact(() => ({}));
    holdSyncs = true;
    calls.length = 0;
    const commits = [journal.commit([{ n: 1 }]), journal.commit([{ n: 2 }]), journal.commit([{ n: 3 }])].map(watch);
    // Written before commit returns: the caller may apply the change at once.
    expect(readFileSync(join(dir, 'journal-1.ndjson'), 'utf8')).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
    await turns();
    expect(calls.filter((c) => c.includes('fsync'))).toEqual(['group fsync journal-1.ndjson']);
    expect(commits.map((c) => c.state)).toEqual(['waiting', 'waiting', 'waiting']);
    heldSyncs.shift()!();
    await turns();
    expect(commits.map((c) => c.state)).toEqual(['resolved', 'resolved', 'resolved']);
    expect(journal.syncs).toBe(1);
    journal.close();
  });

  it('commits made while an fsync runs wait for the next one, which they all share', async () => {
    const { journal } = open();
    journal.compact(() => ({}));
    holdSyncs = true;
    const first = watch(journal.commit([{ n: 1 }]));
    await turns();
    expect(heldSyncs).toHaveLength(1);
    const later = [watch(journal.commit([{ n: 2 }])), watch(journal.commit([{ n: 3 }]))];
    await turns();
    // One fsync at a time: the second has not started.
    expect(heldSyncs).toHaveLength(1);
    heldSyncs.shift()!();
    await turns();
    expect(first.state).toBe('resolved');
    // Written after the first fsync started: not covered by it.
    expect(later.map((c) => c.state)).toEqual(['waiting', 'waiting']);
    expect(heldSyncs).toHaveLength(1);
    heldSyncs.shift()!();
    await turns();
    expect(later.map((c) => c.state)).toEqual(['resolved', 'resolved']);
    expect(journal.syncs).toBe(2);
    journal.close();
  });

  it('flushed() waits for commits not yet fsynced and is at once when there are none', async () => {
    const { journal } = open();
    journal.compact(() => ({}));
    await journal.flushed();
    expect(journal.syncs).toBe(0);
    holdSyncs = true;
    void journal.commit([{ n: 1 }]);
    const flushed = watch(journal.flushed());
    await turns();
    expect(flushed.state).toBe('waiting');
    heldSyncs.shift()!();
    await turns();
    expect(flushed.state).toBe('resolved');
    journal.close();
  });

  it('refuses the group whose fsync failed, and every later write until a restart', async () => {
    const { journal } = open();
    journal.compact(() => ({}));
    holdSyncs = true;
    const failed = watch(journal.commit([{ n: 1 }]));
    await turns();
    const waiting = watch(journal.commit([{ n: 2 }]));
    heldSyncs.shift()!(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    await turns();
    expect(failed.state).toBe('rejected');
    expect(String(failed.error)).toMatch(/EIO/);
    expect(waiting.state).toBe('rejected');
    expect(heldSyncs).toHaveLength(0);
    expect(() => journal.commit([{ n: 3 }])).toThrow(/fsync of the journal failed \(EIO.*restart the process/);
    expect(() => journal.append([{ n: 3 }], false)).toThrow(/restart the process/);
    await expect(journal.flushed()).rejects.toThrow(/EIO/);
    journal.close();
  });

  it('a compaction answers waiting commits (its snapshot is fsynced) and keeps the file of a running fsync open until it ends', async () => {
    const { journal } = open();
    journal.compact(() => ({}));
    holdSyncs = true;
    const running = watch(journal.commit([{ n: 1 }]));
    await turns();
    const waiting = watch(journal.commit([{ n: 2 }]));
    journal.compact(() => ({ total: 3 }));
    await turns();
    expect(waiting.state).toBe('resolved');
    expect(running.state).toBe('waiting');
    // The old journal is deleted but its descriptor still open: the fsync ends without EBADF.
    heldSyncs.shift()!();
    await turns();
    expect(running.state).toBe('resolved');
    const after = watch(journal.commit([{ n: 4 }]));
    await turns();
    heldSyncs.shift()!();
    await turns();
    expect(after.state).toBe('resolved');
    journal.close();
    expect(open().entries).toEqual([{ n: 4 }]);
  });

  it('close fsyncs what commits wait for and answers them', async () => {
    const { journal } = open();
    journal.compact(() => ({}));
    holdSyncs = true;
    const waiting = watch(journal.commit([{ n: 1 }]));
    calls.length = 0;
    journal.close();
    expect(calls).toEqual(['fsync journal-1.ndjson']);
    await turns();
    expect(waiting.state).toBe('resolved');
    expect(heldSyncs).toHaveLength(0);
    expect(open().entries).toEqual([{ n: 1 }]);
  });
});

describe('journal of a process killed with SIGKILL mid-stream', () => {
  const CHILD = fileURLToPath(new URL('./testutil/crash-child.ts', import.meta.url));

  it('reads back every acknowledged entry, in order, and nothing torn', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [CHILD, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    let acknowledged = -1;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const lines = out.split('\n');
        out = lines.pop()!;
        for (const line of lines) acknowledged = Number(line.slice('ack '.length));
        // Mid-stream: the child is inside its next append (or about to be) when the signal lands.
        if (acknowledged >= 40) { child.kill('SIGKILL'); resolve(); }
      });
      void exited.then(() => reject(new Error(`the child exited before 40 appends: ${stderr}`)));
    });
    expect(await exited).toBe('SIGKILL');
    const journalSize = statSync(join(dir, 'journal-1.ndjson')).size;
    const { entries, journal } = open();
    expect(entries.length).toBeGreaterThan(acknowledged);
    expect(entries.map((e) => e.n)).toEqual(entries.map((_, i) => i));
    // Whatever the kill cut short is gone at the next compaction, as every other torn line.
    journal.compact(() => ({ count: entries.length }));
    journal.close();
    expect(existsSync(join(dir, 'journal-1.ndjson'))).toBe(false);
    expect(journalSize).toBeGreaterThan(0);
  });
});
