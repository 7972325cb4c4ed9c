import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedKv } from '../kv/index.ts';
import { WatchStore } from './watches.ts';
import { DAY_MS as DAY } from '../time/index.ts';
import { EVERY_KEY_ACTIVE } from './testutil/receiver.ts';
import { requireAwb } from '../schemas/index.ts';

const PREFIX = 'trk_test_Ab3dE9x';
const NOW = Date.parse('2026-11-20T06:00:00.000Z');

describe('watches', () => {
  let dir: string;
  let kv: EmbeddedKv;
  let watches: WatchStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'push-watch-'));
    kv = new EmbeddedKv(dir);
    watches = new WatchStore(kv);
  });
  afterEach(async () => {
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const watch = (awb: string, nowMs = NOW, terminal = false) =>
    watches.create({ keyPrefix: PREFIX, mode: 'test', carrier: 'dtdc', awb: requireAwb(awb), record: null, polledMs: nowMs, terminal, nowMs });

  it('pages through a key\'s watches with a cursor, in order, each once', async () => {
    for (let i = 0; i < 7; i++) await watch(`V0119000${i}02`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await watches.list(PREFIX, NOW, { cursor, limit: 3 });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((w) => w.awb));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `V0119000${i}02`));
  });

  it('a watch ends 60 days after it began, or 3 days after a terminal state; watching again then starts anew', async () => {
    const first = await watch('V011900002');
    expect(first).toMatchObject({ created: true, watch: { status: 'active', expires_at: new Date(NOW + 60 * DAY).toISOString() } });
    expect((await watch('V011900002', NOW + DAY)).created).toBe(false);
    expect((await watches.get(PREFIX, 'dtdc', requireAwb('V011900002'), NOW + 60 * DAY))?.status).toBe('ended');
    expect((await watch('V011900002', NOW + 61 * DAY)).created).toBe(true);
    const done = await watch('V011900004', NOW, true);
    expect(done.watch.expires_at).toBe(new Date(NOW + 3 * DAY).toISOString());
    // The poller leaves terminal and ended ones alone.
    expect((await watches.pollable(NOW + 62 * DAY, EVERY_KEY_ACTIVE)).map((c) => c.awb)).toEqual(['V011900002']);
  });

  it('DELETE ends a watch; a second DELETE finds none', async () => {
    await watch('V011900002');
    expect(await watches.remove(PREFIX, 'test', 'dtdc', requireAwb('v011900002'))).toBe(true);
    expect(await watches.remove(PREFIX, 'test', 'dtdc', requireAwb('V011900002'))).toBe(false);
    expect((await watches.list(PREFIX, NOW, { limit: 10 })).items).toEqual([]);
    expect(await watches.pollable(NOW, EVERY_KEY_ACTIVE)).toEqual([]);
  });
});
