import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { normalizePoll } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { journeyPoll } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { toRows } from './rows.ts';
import { activeShipments } from './shipments.ts';
import { createTestDatabase, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter } from './writer.ts';
import type { KeyMode } from '../schemas/index.ts';
import { HOUR_MS as HOUR } from '../time/index.ts';

const { rules } = product;

/** The first `scanCount` scans of a journey (so not yet delivered), polled at `polledAtMs`. */
function partial(carrier: string, index: number, scanCount: number, polledAtMs: number): CarrierPoll {
  const poll = journeyPoll(carrier, index);
  const ordered = [...poll.scans].sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
  return { ...poll, polled_at: new Date(polledAtMs).toISOString(), scans: ordered.slice(0, scanCount) };
}

describe('activeShipments (real ClickHouse)', () => {
  let db: TestDatabase;
  const base = Date.UTC(2026, 10, 12, 0, 0);
  const inTransit = partial('delhivery', 1, 5, base + 2 * HOUR);
  const delivered = journeyPoll('bluedart', 2); // polled at 2026-11-13 12:30 UTC
  const deliveredEarlierInTransit = partial('bluedart', 2, 4, base);
  const old = partial('dtdc', 3, 4, base - 40 * 24 * HOUR);
  const sandbox = partial('ekart', 4, 3, base + HOUR);
  const sandboxTwinOfDelivered = partial('bluedart', 2, 4, base + 3 * HOUR);

  beforeAll(async () => {
    db = await createTestDatabase();
    const writer = new ClickHouseWriter(db.client);
    const write = (poll: CarrierPoll, mode: KeyMode = 'live') => writer.write(toRows(poll, normalizePoll(poll, rules), rules.mappingVersion, mode));
    write(inTransit);
    write(delivered);
    write(deliveredEarlierInTransit); // arrives late: the delivered state still wins
    write(old);
    write(sandbox, 'test');
    write(sandboxTwinOfDelivered, 'test'); // same AWB as a delivered live shipment, still moving in the sandbox
    await writer.close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lists non-terminal shipments polled since the cutoff, per mode, oldest poll first', async () => {
    const active = await activeShipments(db.client, base - 24 * HOUR);
    expect(active).toEqual([
      { carrier: 'ekart', awb: sandbox.awb, mode: 'test', lastPolledMs: base + HOUR },
      { carrier: 'delhivery', awb: inTransit.awb, mode: 'live', lastPolledMs: base + 2 * HOUR },
      { carrier: 'bluedart', awb: delivered.awb, mode: 'test', lastPolledMs: base + 3 * HOUR },
    ]);
    expect((await activeShipments(db.client, base - 60 * 24 * HOUR)).map((s) => s.carrier)).toContain('dtdc');
    expect(await activeShipments(db.client, base + 4 * HOUR)).toEqual([]);
  });
});
