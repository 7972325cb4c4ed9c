/**
 * Migrations 0013/0014: events stored under the old id (carrier + AWB + time + raw status) are
 * re-keyed to the id the code now gives (+ location), so a re-poll after the upgrade adds no row.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizePoll, scanEventIds } from '../normalize/index.ts';
import { makePoll, scan } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { DEFAULT_MIGRATIONS_DIR, migrate } from './migrate.ts';
import { toRows, type PollRows } from './rows.ts';
import { countOf, createTestDatabase, rowsOf, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter } from './writer.ts';
import { storedEventsFor } from './events.ts';

const { rules } = product;
const at = '2026-11-12T10:00:00';
const poll = makePoll({
  scans: [
    scan({ occurred_at: '2026-11-11T09:00:00', raw_status: 'Manifested', raw_code: 'UD', location: 'Delhi_Hub (Delhi)' }),
    scan({ occurred_at: at, raw_status: 'In Transit', raw_code: 'XX', location: 'Hub A' }),
    scan({ occurred_at: '2026-11-12T18:00:00', raw_status: 'Delivered', raw_code: 'DL', location: null }),
  ],
});

/** The rows the code before 0013 wrote for `poll`: the same rows under the old ids and rules. */
function legacyRows(): PollRows {
  const result = normalizePoll(poll, rules);
  const rows = toRows(poll, result, rules.mappingVersion);
  const legacyOf = new Map(poll.scans.map((s) => {
    const ids = scanEventIds(poll.carrier, poll.awb.trim().toUpperCase(), s);
    return [ids.id, ids.legacyId];
  }));
  return { ...rows, events: rows.events.map((e) => ({ ...e, event_id: legacyOf.get(e.event_id)!, mapping_version: 'before-0013' })) };
}

async function mutationsDone(db: TestDatabase): Promise<void> {
  // 0014 is a mutation, applied in the background: wait for it as a reader would.
  while (await countOf(db.client, "SELECT count() AS c FROM system.mutations WHERE database = currentDatabase() AND table = 'events' AND is_done = 0") > 0) {
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('event ids with location: migrations 0013 and 0014 (real ClickHouse)', () => {
  let db: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true, filter: (src) => !/001[34]_/.test(src) });
    db = await createTestDatabase({ migrate: false });
    await migrate(db.target, { dir });
    const writer = new ClickHouseWriter(db.client);
    writer.write([legacyRows()]);
    await writer.close();
  });
  afterAll(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('re-keys stored events to the ids the code gives, and a re-poll adds no duplicate', async () => {
    const result = normalizePoll(poll, rules);
    if (result.kind !== 'found') throw new Error('expected a shipment');
    const ids = result.shipment.record.events.map((e) => e.event_id).sort();
    const before = await rowsOf<{ event_id: string }>(db.client, 'SELECT event_id FROM events ORDER BY event_id');
    expect(before.map((r) => r.event_id)).not.toEqual(ids);

    const { applied } = await migrate(db.target);
    expect(applied).toEqual(['0013_events_location_ids.sql', '0014_events_drop_old_ids.sql']);
    await mutationsDone(db);
    const after = await rowsOf<{ event_id: string; mapping_version: string }>(db.client, 'SELECT event_id, mapping_version FROM events ORDER BY event_id');
    expect(after).toEqual(ids.map((event_id) => ({ event_id, mapping_version: 'before-0013' })));

    // The next poll of the shipment, normalized by the new code, lands on the same ids.
    const writer = new ClickHouseWriter(db.client);
    const next = { ...poll, poll_id: 'next-poll', polled_at: '2026-11-21T00:00:00.000Z' };
    writer.write([toRows(next, normalizePoll(next, rules), rules.mappingVersion)]);
    await writer.close();
    expect(await countOf(db.client, 'SELECT count() AS c FROM events FINAL')).toBe(ids.length);
    const stored = await storedEventsFor(db.client, [{ carrier: poll.carrier, awb: poll.awb }]);
    expect(stored.map((e) => e.event_id).sort()).toEqual(ids);
  });
});
