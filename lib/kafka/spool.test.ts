/** The spool's file rules, without Kafka: segments, positions, torn lines. */
import { appendFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SPOOL_START, Spool, comparePositions, packPosition, unpackPosition } from './spool.ts';

const line = (i: number) => JSON.stringify({ n: i, pad: 'x'.repeat(1_000) });

describe('spool', () => {
  it('packs a position into one Kafka offset and back; -1 is nothing committed', () => {
    const p = { segment: 7, byte: 4_194_000 };
    expect(unpackPosition(packPosition(p))).toEqual(p);
    expect(unpackPosition('-1')).toBeNull();
    expect(comparePositions({ segment: 2, byte: 0 }, { segment: 1, byte: 9_999_999 })).toBeGreaterThan(0);
  });

  it('rolls over to a new segment past 4 MiB; a read at a segment\'s end starts the next one and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spool-'));
    const spool = new Spool(dir);
    for (let i = 0; i < 5_000; i++) spool.append(line(i));
    expect(readdirSync(dir).filter((f) => f.endsWith('.ndjson'))).toHaveLength(2);
    // Everything, chunk by chunk, in order, once.
    const seen: number[] = [];
    let at = SPOOL_START;
    for (let chunk = await spool.read(at, 512 * 1024); chunk; chunk = await spool.read(at, 512 * 1024)) {
      expect(comparePositions(chunk.start, at)).toBeGreaterThanOrEqual(0);
      seen.push(...chunk.lines.map((l) => (JSON.parse(l) as { n: number }).n));
      at = chunk.next;
    }
    expect(seen).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect(spool.bytesAfter(at)).toBe(0);
    // From the first segment's end: the chunk starts at the second segment's start.
    const firstEnd = { segment: 1, byte: await firstSegmentSize(spool) };
    const next = await spool.read(firstEnd, 1_024);
    expect(next!.start).toEqual({ segment: 2, byte: 0 });
    // Segments wholly sent are deleted.
    spool.removeBefore(at);
    expect(readdirSync(dir).filter((f) => f.endsWith('.ndjson'))).toHaveLength(1);
    spool.close();
  });

  it('cuts a torn last line at open, so the next line starts on its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spool-'));
    const first = new Spool(dir);
    first.append(line(1));
    first.close();
    appendFileSync(join(dir, '0000000001.ndjson'), '{"n":2,"pad":"tor');
    const again = new Spool(dir);
    again.append(line(3));
    const chunk = await again.read(SPOOL_START, 1 << 20);
    expect(chunk!.lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([1, 3]);
    again.close();
  });
});

/** The first segment's size: where a reader stands once it has read all of it. */
async function firstSegmentSize(spool: Spool): Promise<number> {
  let at = SPOOL_START;
  for (let chunk = await spool.read(at, 1 << 20); chunk && chunk.start.segment === 1; chunk = await spool.read(at, 1 << 20)) at = chunk.next;
  return at.byte;
}
