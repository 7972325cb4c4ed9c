/**
 * The writer's "already stored?" queries (writer.ts explains when each one is asked and why that is
 * enough). Both select by carrier and awb, the sort-key prefix of every table, in IN lists of at
 * most ~100 KB of text (max_query_size is 256 KiB). `carrier IN (...) AND awb IN (...)` rather than
 * `(carrier, awb) IN ((...), ...)`: 18.16 parses a list of tuples ~3x slower (3,000 shipments: 60 ms
 * against 20-28 ms) and both use the primary key. It also matches other carriers' AWBs of the same
 * text (rare: AWB formats differ per carrier); answers are filtered by exact key here.
 */
import type { ClickHouseClient } from './client.ts';
import type { CarrierPollRow, EventRow, ShipmentRow } from './rows.ts';
import { sqlInt, sqlString, sqlStringList } from './sql.ts';

export type StoredTable = 'carrier_polls' | 'events' | 'shipments';
export type AnyRow = CarrierPollRow | EventRow | ShipmentRow;

/**
 * Per table: the column identifying a row, and the time column that narrows the question (a
 * duplicate has the same value there as its original).
 */
const CHECK_COLUMNS: Record<StoredTable, { key: 'poll_id' | 'event_id'; time: 'polled_at' | 'occurred_at' | 'version' }> = {
  carrier_polls: { key: 'poll_id', time: 'polled_at' },
  events: { key: 'event_id', time: 'occurred_at' },
  shipments: { key: 'poll_id', time: 'version' },
};

/** Budget of IN-list text per query. */
const CHECK_QUERY_BUDGET = 100_000;

export function keyOf(table: StoredTable, row: AnyRow): string {
  return table === 'events' ? (row as EventRow).event_id : (row as CarrierPollRow | ShipmentRow).poll_id;
}

/** Stored identity: the key and the rules that produced the row. */
export function identity(key: string, mappingVersion: string): string {
  return `${key}\u0000${mappingVersion}`;
}

export function shipmentKey(row: { carrier: string; awb: string }): string {
  return `${row.carrier}\u0000${row.awb}`;
}

/** The row's time value for the question: DateTime text ('YYYY-MM-DD hh:mm:ss' sorts as time) or the version. */
function timeOf(table: StoredTable, row: AnyRow): string | number {
  if (table === 'events') return (row as EventRow).occurred_at;
  if (table === 'shipments') return (row as ShipmentRow).version;
  return (row as CarrierPollRow).polled_at;
}

function timeLiteral(value: string | number): string {
  return typeof value === 'number' ? sqlInt(value) : `toDateTime(${sqlString(value)}, 'UTC')`;
}

interface ShipmentSpan {
  pair: [string, string];
  low: string | number;
  high: string | number;
}

/** `carrier IN (...) AND awb IN (...)` covering the chunk's shipments. */
function shipmentFilter(chunk: readonly ShipmentSpan[]): string {
  const carriers = [...new Set(chunk.map((e) => e.pair[0]))];
  return `carrier IN ${sqlStringList(carriers)} AND awb IN ${sqlStringList(chunk.map((e) => e.pair[1]))}`;
}

/** Runs `ask` once per chunk of shipments whose IN list fits the budget. */
async function inChunks(spans: Iterable<ShipmentSpan>, ask: (chunk: ShipmentSpan[]) => Promise<void>): Promise<void> {
  let chunk: ShipmentSpan[] = [];
  let budget = 0;
  for (const span of spans) {
    const cost = span.pair[1].length + 4;
    if (chunk.length > 0 && budget + cost > CHECK_QUERY_BUDGET) {
      await ask(chunk);
      chunk = [];
      budget = 0;
    }
    chunk.push(span);
    budget += cost;
  }
  if (chunk.length > 0) await ask(chunk);
}

/**
 * Identities (key + mapping_version) already in `table` among those of `rows`: every stored row of
 * those shipments within the rows' time span (a few dozen per shipment), filtered here.
 */
export async function storedIdentities(client: ClickHouseClient, table: StoredTable, rows: readonly AnyRow[]): Promise<Set<string>> {
  const stored = new Set<string>();
  if (rows.length === 0) return stored;
  const byShipment = new Map<string, ShipmentSpan>();
  const wanted = new Set<string>();
  for (const row of rows) {
    wanted.add(identity(keyOf(table, row), row.mapping_version));
    const at = timeOf(table, row);
    const key = shipmentKey(row);
    const entry = byShipment.get(key);
    if (!entry) byShipment.set(key, { pair: [row.carrier, row.awb], low: at, high: at });
    else {
      if (at < entry.low) entry.low = at;
      if (at > entry.high) entry.high = at;
    }
  }
  const { key, time } = CHECK_COLUMNS[table];
  await inChunks(byShipment.values(), async (chunk) => {
    let { low, high } = chunk[0]!;
    for (const entry of chunk) {
      if (entry.low < low) low = entry.low;
      if (entry.high > high) high = entry.high;
    }
    const query = `SELECT ${key} AS k, mapping_version AS v FROM ${table}
      WHERE ${shipmentFilter(chunk)} AND ${time} >= ${timeLiteral(low)} AND ${time} <= ${timeLiteral(high)}`;
    const result = await client.query({ query, format: 'JSONEachRow' });
    for (const { k, v } of await result.json<{ k: string; v: string }>()) {
      const id = identity(k, v);
      if (wanted.has(id)) stored.add(id);
    }
  });
  return stored;
}

/** What carrier_polls says about a flush's shipments, asked before any row of the flush is inserted. */
export interface PollKnowledge {
  /** Shipments (shipmentKey) with at least one stored poll, of any time. */
  known: Set<string>;
  /** Identities (poll_id + mapping_version) of the stored polls polled within the span asked about. */
  storedPolls: Set<string>;
  /** Their poll_ids, of any mapping_version. */
  storedPollIds: Set<string>;
}

/**
 * One carrier_polls question for a flush: which of `shipments` have any stored poll, and which polls
 * polled within [low, high] ('YYYY-MM-DD hh:mm:ss', UTC) are stored. `span` null: none asked for.
 */
export async function pollKnowledge(
  client: ClickHouseClient,
  shipments: Iterable<readonly [string, string]>,
  span: { low: string; high: string } | null,
): Promise<PollKnowledge> {
  const knowledge: PollKnowledge = { known: new Set(), storedPolls: new Set(), storedPollIds: new Set() };
  const inSpan = span ? `polled_at >= ${timeLiteral(span.low)} AND polled_at <= ${timeLiteral(span.high)}` : '0';
  const asked = new Map<string, ShipmentSpan>();
  for (const [carrier, awb] of shipments) asked.set(shipmentKey({ carrier, awb }), { pair: [carrier, awb], low: 0, high: 0 });
  await inChunks(asked.values(), async (chunk) => {
    const query = `SELECT carrier, awb, groupArrayIf(poll_id, ${inSpan}) AS ids, groupArrayIf(mapping_version, ${inSpan}) AS versions
      FROM carrier_polls WHERE ${shipmentFilter(chunk)} GROUP BY carrier, awb`;
    const result = await client.query({ query, format: 'JSONEachRow' });
    for (const row of await result.json<{ carrier: string; awb: string; ids: string[]; versions: string[] }>()) {
      const key = shipmentKey(row);
      if (!asked.has(key)) continue;
      knowledge.known.add(key);
      row.ids.forEach((id, i) => {
        knowledge.storedPollIds.add(id);
        knowledge.storedPolls.add(identity(id, row.versions[i]!));
      });
    }
  });
  return knowledge;
}
