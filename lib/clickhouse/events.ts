/**
 * Reads of stored events for `replay --diff`: what ClickHouse holds for a set of shipments, or for
 * the shipments polled in a time window, so the current rules' output can be compared with it.
 * Exact before merges: one row per event_id, the most recently written (argMax by ingest_version).
 */
import { storedAwb } from '../schemas/index.ts';
import type { ClickHouseClient } from './client.ts';
import { clickHouseDateTimeToIso } from './datetime.ts';
import type { EventRow, MappedEvent } from './rows.ts';
import { sqlInt, sqlPairList, sqlStringList } from './sql.ts';

/**
 * The latest stored row of an event, the columns `replay --diff` shows. Its occurred_at is UTC ISO
 * with milliseconds (stored to the second), not ClickHouse's DateTime text as the query returns it.
 */
export type StoredEvent = MappedEvent & Pick<EventRow, 'occurred_at' | 'raw_status' | 'raw_code' | 'mapping_version'>;

export interface ShipmentKey {
  carrier: string;
  awb: string;
}

/** Latest row per event_id; `where` filters `events` (it must restrict carrier/awb to use the primary key). */
function latestEventsQuery(where: string): string {
  return `
    SELECT event_id, carrier, awb, occurred AS occurred_at,
      tupleElement(latest, 1) AS status, tupleElement(latest, 2) AS code, tupleElement(latest, 3) AS reason_code,
      tupleElement(latest, 4) AS raw_status, tupleElement(latest, 5) AS raw_code, tupleElement(latest, 6) AS mapping_version
    FROM
    (
      -- One tuple: argMax of a Nullable column alone would skip NULLs and mix rows.
      -- Aliases differ from column names: an alias named like the column it aggregates is ambiguous.
      SELECT carrier, awb, event_id, any(occurred_at) AS occurred,
        argMax(tuple(status, code, reason_code, raw_status, raw_code, mapping_version), ingest_version) AS latest
      FROM events
      WHERE ${where}
      GROUP BY carrier, awb, event_id
    )
    ORDER BY carrier, awb, occurred DESC, event_id`;
}

/** The query's row (occurred_at as ClickHouse's DateTime text) as a StoredEvent. */
function toStoredEvent(row: StoredEvent): StoredEvent {
  return { ...row, occurred_at: clickHouseDateTimeToIso(row.occurred_at) };
}

/** Shipments per query: keeps the IN list well under ClickHouse's 256 KiB max_query_size. */
const SHIPMENTS_PER_QUERY = 1_000;

/** Stored events of these shipments (AWBs as stored: trimmed, uppercased), newest first per shipment. */
export async function storedEventsFor(client: ClickHouseClient, shipments: readonly ShipmentKey[]): Promise<StoredEvent[]> {
  const unique = new Map<string, [string, string]>();
  for (const { carrier, awb } of shipments) {
    const normalized = storedAwb(awb);
    unique.set(`${carrier}\u0000${normalized}`, [carrier, normalized]);
  }
  const pairs = [...unique.values()];
  const events: StoredEvent[] = [];
  for (let i = 0; i < pairs.length; i += SHIPMENTS_PER_QUERY) {
    const result = await client.query({
      query: latestEventsQuery(`(carrier, awb) IN ${sqlPairList(pairs.slice(i, i + SHIPMENTS_PER_QUERY))}`),
      format: 'JSONEachRow',
    });
    for (const row of await result.json<StoredEvent>()) events.push(toStoredEvent(row));
  }
  return events;
}

export interface PollWindow {
  /** Inclusive start (ISO date-time or epoch ms). */
  since: string | number;
  /** Exclusive end; default: no end. */
  until?: string | number;
  /** Only these carriers; default all. */
  carriers?: readonly string[];
}

function epochMs(value: string | number, what: string): number {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) throw new TypeError(`${what} is not a date-time: ${JSON.stringify(value)}`);
  return Math.floor(ms);
}

/** carrier_polls conditions of a window; null when it selects nothing (an empty carrier list). */
export function windowConditions(window: PollWindow): string[] | null {
  const since = epochMs(window.since, 'since');
  const until = window.until === undefined ? null : epochMs(window.until, 'until');
  const polled = 'toUInt64(toUnixTimestamp(polled_at)) * 1000 + polled_at_ms';
  // Whole-second bounds on polled_at let ClickHouse skip partitions; the ms bounds make them exact.
  const conditions = [`polled_at >= toDateTime(${sqlInt(Math.floor(since / 1000))}, 'UTC')`, `${polled} >= ${sqlInt(since)}`];
  if (until !== null) conditions.push(`polled_at <= toDateTime(${sqlInt(Math.floor(until / 1000))}, 'UTC')`, `${polled} < ${sqlInt(until)}`);
  if (window.carriers) {
    if (window.carriers.length === 0) return null;
    conditions.push(`carrier IN ${sqlStringList(window.carriers)}`);
  }
  return conditions;
}

/**
 * Stored events of every shipment polled in [since, until) (carrier_polls.polled_at, to the
 * millisecond), streamed in batches of up to `batchSize`, ordered by carrier, AWB, newest first.
 */
export async function* storedEventsForPollWindow(
  client: ClickHouseClient, window: PollWindow, options: { batchSize?: number } = {},
): AsyncGenerator<StoredEvent[]> {
  const batchSize = options.batchSize ?? 10_000;
  const conditions = windowConditions(window);
  if (!conditions) return;
  const carrierFilter = window.carriers ? ` AND carrier IN ${sqlStringList(window.carriers)}` : '';
  const where = `(carrier, awb) IN (SELECT carrier, awb FROM carrier_polls WHERE ${conditions.join(' AND ')})${carrierFilter}`;
  const result = await client.query({ query: latestEventsQuery(where), format: 'JSONEachRow' });
  let batch: StoredEvent[] = [];
  for await (const rows of result.stream<StoredEvent>()) {
    for (const row of rows) {
      batch.push(toStoredEvent(row.json()));
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/** The shipments polled in [since, until): which polls a replay of the window covers. */
export async function shipmentsPolledBetween(client: ClickHouseClient, window: PollWindow): Promise<ShipmentKey[]> {
  const conditions = windowConditions(window);
  if (!conditions) return [];
  const result = await client.query({
    query: `SELECT DISTINCT carrier, awb FROM carrier_polls WHERE ${conditions.join(' AND ')} ORDER BY carrier, awb`,
    format: 'JSONEachRow',
  });
  return result.json<ShipmentKey>();
}
