/**
 * The writer's "already stored?" plan for one flush: which rows of which table to ask ClickHouse
 * about, at which attempt (writer.ts explains why this is exact; stored.ts holds the queries).
 *
 * 1. carrier_polls: one question per flush (again at a retried attempt), before anything is
 *    inserted: which of the flush's shipments have a stored poll, which of its polls are stored.
 * 2. events: only rows of shipments with a stored poll. 3. shipments: only rows whose own poll is
 *    stored. 4. A retried attempt of events or shipments asks about all its rows.
 *
 * Its state (what carrier_polls said) lives here, per flush; the writer only asks `storedAmong`.
 */
import type { ClickHouseClient } from './client.ts';
import type { ShipmentRow } from './rows.ts';
import { pollKnowledge, shipmentKey, storedIdentities, type AnyRow, type PollKnowledge } from './stored.ts';
import { WRITER_TABLES, zero, type Batch, type TableCounts, type WriterTable } from './write-queue.ts';

export class StoredPlan {
  private knowledge: PollKnowledge | null = null;
  /** Time spent asking, in ms. */
  checkMs = 0;
  /** Rows asked about per table (a retried attempt counts again). */
  readonly checkedRows: TableCounts = zero();

  private readonly client: ClickHouseClient;
  private readonly batch: Batch;
  constructor(client: ClickHouseClient, batch: Batch) {
    this.client = client;
    this.batch = batch;
  }

  /** The identities (key + mapping_version) among `fresh` rows of `table` that ClickHouse holds. */
  async storedAmong(table: WriterTable, attempt: number, fresh: AnyRow[]): Promise<Set<string>> {
    if (table === 'carrier_polls') {
      this.checkedRows.carrier_polls += fresh.length;
      return (await this.askPolls()).storedPolls;
    }
    if (attempt > 0) return this.ask(table, fresh);
    const known = this.knowledge ?? (await this.askPolls());
    return this.ask(table, fresh.filter((row) => mayBeStored(table, row, known)));
  }

  private async askPolls(): Promise<PollKnowledge> {
    const at = performance.now();
    try {
      this.knowledge = await pollKnowledge(this.client, shipmentsOf(this.batch), pollSpanOf(this.batch));
      return this.knowledge;
    } finally {
      this.checkMs += performance.now() - at;
    }
  }

  private async ask(table: WriterTable, rows: AnyRow[]): Promise<Set<string>> {
    this.checkedRows[table] += rows.length;
    const at = performance.now();
    try {
      return await storedIdentities(this.client, table, rows);
    } finally {
      this.checkMs += performance.now() - at;
    }
  }
}

/**
 * Whether a row may already be stored, from what carrier_polls said about the flush's shipments
 * before the flush inserted anything: an event only if its shipment has a stored poll (events are
 * written after their poll), a shipments row only if its own poll is stored (written after it).
 */
function mayBeStored(table: WriterTable, row: AnyRow, knowledge: PollKnowledge): boolean {
  if (table === 'events') return knowledge.known.has(shipmentKey(row));
  if (table === 'shipments') return knowledge.storedPollIds.has((row as ShipmentRow).poll_id);
  return true;
}

/** Every shipment (carrier, awb) with a row in the flush, whatever the table (requeued rows too). */
function shipmentsOf(batch: Batch): (readonly [string, string])[] {
  const pairs = new Map<string, readonly [string, string]>();
  for (const table of WRITER_TABLES) {
    for (const row of batch[table] as AnyRow[]) {
      const key = shipmentKey(row);
      if (!pairs.has(key)) pairs.set(key, [row.carrier, row.awb]);
    }
  }
  return [...pairs.values()];
}

/** The polled_at span of the flush's polls and of the polls its shipments rows came from. */
function pollSpanOf(batch: Batch): { low: string; high: string } | null {
  let low: string | null = null;
  let high: string | null = null;
  const see = (at: string) => {
    if (low === null || at < low) low = at;
    if (high === null || at > high) high = at;
  };
  for (const row of batch.carrier_polls) see(row.polled_at);
  for (const row of batch.shipments) see(row.updated_at);
  return low !== null && high !== null ? { low, high } : null;
}
