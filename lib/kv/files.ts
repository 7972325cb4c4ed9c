/**
 * The file steps every store on disk takes, written once: appending to a log and replacing a file
 * whole. The journal (journal.ts) builds its snapshots on `replaceFile`; the raw-poll log, the
 * Kafka spool and the SQL recorder append through `appendToFile`, so there is one place that says
 * how this code base appends.
 */
import { appendFileSync, closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Appends `text` before returning (O_APPEND: concurrent appenders, even other processes, never
 * overwrite each other, and one call's text is not interleaved with another's). Not fsynced: the OS
 * keeps it through a crash of the process, not through a power cut.
 */
export function appendToFile(path: string, text: string): void {
  appendFileSync(path, text);
}

/** `appendToFile` without blocking the event loop: for logs written in batches off the request path. */
export function appendToFileLater(path: string, text: string): Promise<void> {
  return appendFile(path, text);
}

/**
 * Replaces `path` with `text` so that a reader (or a restart after a crash) finds the old file or
 * the new one, never a mix: written to `<path>.tmp`, then renamed over it (the rename is the commit
 * point). `durable`: the data is fsynced before the rename and the directory after it, so the new
 * file also survives a power cut once this returns; without it a crash of the process still finds
 * one whole file, but a power cut may leave the old one (or on some file systems an empty one).
 */
export function replaceFile(path: string, text: string, durable: boolean): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeFileSync(fd, text);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  if (durable) syncDir(dirname(path));
}

/** Makes the directory's entries (a rename, a created file) survive a power cut. */
export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
