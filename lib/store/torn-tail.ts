import { open } from 'node:fs/promises';

/** How far back one read looks for the last newline; a longer torn line takes several reads. */
const CHUNK_BYTES = 64 * 1024;

/**
 * Cuts a line-per-record file back to the end of its last complete line (truncates whatever
 * follows the last newline: what a crash in the middle of an append leaves) and returns how many
 * bytes were dropped; 0 when the file ends in a newline, is empty or is absent. Reads backwards
 * from the end, so a large log costs one small read, not a pass over the whole file.
 *
 * Only a file's one writer may call it, before its first append: a reader would cut a line that
 * is being written.
 */
export async function cutTornTail(path: string): Promise<number> {
  let handle;
  try {
    handle = await open(path, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(CHUNK_BYTES);
    // Where the last complete line ends: after the last newline, or the file's start if it has none.
    let keep = 0;
    for (let stop = size; stop > 0; ) {
      const start = Math.max(0, stop - CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, stop - start, start);
      const newline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (newline >= 0) {
        keep = start + newline + 1;
        break;
      }
      stop = start;
    }
    if (keep === size) return 0;
    await handle.truncate(keep);
    return size - keep;
  } finally {
    await handle.close();
  }
}
