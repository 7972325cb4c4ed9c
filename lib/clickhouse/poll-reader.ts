/**
 * Reads `carrier_polls` back as `carrier_poll.v1` records (replay `--from-clickhouse`), never
 * holding more than a bounded part of a window in memory, on either side:
 *
 * - `streamPollsByTime`: the whole window in polled_at order (the replay output). One query;
 *   ClickHouse sorts it, spilling to disk past `max_bytes_before_external_sort`, and the rows are
 *   streamed with back pressure.
 * - `pollPages`: the window as pages of whole shipments (all polls of an AWB in one page, each
 *   shipment's polls in polled_at order), a contiguous sort-key range of one carrier per page
 *   (replay `--diff` and `--apply`): each page is read through the primary key, its stored events
 *   can be read by the same range, and the last finished page's key is a checkpoint to resume from.
 *
 * Rows of one poll written twice (a replay's apply rewrites carrier_polls with the new
 * mapping_version; ReplacingMergeTree collapses them on merge) are read once: the latest written.
 * The AWB comes back as stored (trimmed, uppercased) and header times to the second, in UTC.
 */

import type { CarrierPoll, Location } from '../schemas/index.ts';
import type { ClickHouseClient } from './client.ts';
import type { CarrierPollRow } from './rows.ts';
import { clickHouseDateTimeToIso } from './datetime.ts';
import { windowConditions, type PollWindow } from './events.ts';
import { withReadRetry } from './read-retry.ts';
import { sqlString } from './sql.ts';
import type { KeyMode } from '../schemas/index.ts';

export interface StoredPoll {
  poll: CarrierPoll;
  mode: KeyMode;
  /** Rules that last normalized this poll in ClickHouse. */
  mapping_version: string;
  ingest_version: number;
}

/** A carrier_polls row as read back: the written row's columns (rows.ts), ingest_version as text. */
interface CarrierPollsRow extends Omit<CarrierPollRow, 'source' | 'outcome' | 'scan_count' | 'normalize_error'> {
  source: CarrierPoll['source'];
  outcome: CarrierPoll['outcome'];
  ingest_version: string;
}

const POLL_COLUMNS = `poll_id, carrier, awb, polled_at, polled_at_ms, source, outcome, mode,
  origin_office, origin_city, origin_state, origin_pincode,
  destination_office, destination_city, destination_state, destination_pincode,
  service_type, weight_grams, booked_at, estimated_delivery_at, scans_json, mapping_version, error, ingest_version`;

function location(office: string | null, city: string | null, state: string | null, pincode: string | null): Location | null {
  if (office === null && city === null && state === null && pincode === null) return null;
  return { office, city, state, pincode };
}

function isoOrNull(text: string | null): string | null {
  return text === null ? null : clickHouseDateTimeToIso(text);
}

/** One carrier_polls row → the carrier_poll.v1 record it was written from (see the top of this file). */
export function rebuildPoll(row: CarrierPollsRow): StoredPoll {
  const origin = location(row.origin_office, row.origin_city, row.origin_state, row.origin_pincode);
  const destination = location(row.destination_office, row.destination_city, row.destination_state, row.destination_pincode);
  const header = {
    origin, destination, service_type: row.service_type, weight_grams: row.weight_grams, booked_at: isoOrNull(row.booked_at),
    estimated_delivery_at: isoOrNull(row.estimated_delivery_at),
  };
  const empty = Object.values(header).every((v) => v === null);
  return {
    poll: {
      schema: 'carrier_poll.v1',
      poll_id: row.poll_id,
      carrier: row.carrier,
      awb: row.awb,
      polled_at: clickHouseDateTimeToIso(row.polled_at, row.polled_at_ms),
      source: row.source,
      outcome: row.outcome,
      shipment: empty ? null : header,
      scans: JSON.parse(row.scans_json) as CarrierPoll['scans'],
      error: row.error,
    },
    mode: row.mode,
    mapping_version: row.mapping_version,
    ingest_version: Number(row.ingest_version),
  };
}

/** Rows of the window (a rewritten poll counts once per row: an ETA's total, not an exact count). */
export async function countPolls(client: ClickHouseClient, window: PollWindow): Promise<number> {
  const conditions = windowConditions(window);
  if (!conditions) return 0;
  const [row] = await withReadRetry(async () => (await client.query({
    query: `SELECT count() AS c FROM carrier_polls WHERE ${conditions.join(' AND ')}`,
    format: 'JSONEachRow',
  })).json<{ c: string }>());
  return Number(row?.c ?? 0);
}

export interface StreamOptions {
  /** ClickHouse sorts in memory up to this many bytes, then on disk. Default 256 MB. */
  externalSortBytes?: number;
}

/** The window's polls in polled_at order (then poll_id), each poll once. */
export async function* streamPollsByTime(client: ClickHouseClient, window: PollWindow, options: StreamOptions = {}): AsyncGenerator<StoredPoll> {
  const conditions = windowConditions(window);
  if (!conditions) return;
  // Retried until the stream starts; a failure mid-stream ends the run (its output is partial).
  const result = await withReadRetry(() => client.query({
    // ingest_version DESC: of a poll's rows, the latest written comes first and the rest are skipped.
    query: `SELECT ${POLL_COLUMNS} FROM carrier_polls WHERE ${conditions.join(' AND ')}
      ORDER BY polled_at, polled_at_ms, poll_id, ingest_version DESC`,
    format: 'JSONEachRow',
    clickhouse_settings: { max_bytes_before_external_sort: String(options.externalSortBytes ?? 256_000_000) },
  }));
  let previous: string | null = null;
  for await (const rows of result.stream<CarrierPollsRow>()) {
    for (const row of rows) {
      const value = row.json();
      if (value.poll_id === previous) continue;
      previous = value.poll_id;
      yield rebuildPoll(value);
    }
  }
}

/** The last AWB of a carrier a page covered: where the next page (or a resumed run) starts after. */
export interface PageCursor {
  carrier: string;
  awb: string;
}

export interface PollPage {
  carrier: string;
  /** Inclusive AWB range of the page, as stored. */
  firstAwb: string;
  lastAwb: string;
  /** Sorted by AWB, then polled_at; every poll of the window for those AWBs. */
  polls: StoredPoll[];
}

export interface PageOptions {
  /** Start after this key (a checkpoint); default the window's start. */
  after?: PageCursor | null;
  /** Polls per page, about (whole shipments: a page may exceed it by one shipment). Default 20,000. */
  pollsPerPage?: number;
  /** AWBs listed per key query (split into pages locally). Default 50,000. */
  keysPerQuery?: number;
}

/** The window's carriers, in order. */
async function carriersOf(client: ClickHouseClient, conditions: string[]): Promise<string[]> {
  const rows = await withReadRetry(async () => (await client.query({
    query: `SELECT DISTINCT carrier FROM carrier_polls WHERE ${conditions.join(' AND ')} ORDER BY carrier`,
    format: 'JSONEachRow',
  })).json<{ carrier: string }>());
  return rows.map((r) => r.carrier);
}

/** Pages of whole shipments, in (carrier, AWB) order (see the top of this file). */
export async function* pollPages(client: ClickHouseClient, window: PollWindow, options: PageOptions = {}): AsyncGenerator<PollPage> {
  const conditions = windowConditions(window);
  if (!conditions) return;
  const pollsPerPage = options.pollsPerPage ?? 20_000;
  const keysPerQuery = options.keysPerQuery ?? 50_000;
  const after = options.after ?? null;
  const where = conditions.join(' AND ');
  for (const carrier of await carriersOf(client, conditions)) {
    if (after && carrier < after.carrier) continue;
    let last = after && carrier === after.carrier ? after.awb : null;
    for (;;) {
      // carrier = X AND awb > Y: a primary-key range, so each key query reads only what is left.
      const keys = await withReadRetry(async () => (await client.query({
        query: `SELECT awb, count() AS n FROM carrier_polls
          WHERE carrier = ${sqlString(carrier)} AND ${where}${last === null ? '' : ` AND awb > ${sqlString(last)}`}
          GROUP BY awb ORDER BY awb LIMIT ${keysPerQuery}`,
        format: 'JSONEachRow',
      })).json<{ awb: string; n: string }>());
      if (keys.length === 0) break;
      let start = 0;
      let polls = 0;
      for (let i = 0; i < keys.length; i++) {
        polls += Number(keys[i]!.n);
        if (polls < pollsPerPage && i < keys.length - 1) continue;
        yield await readPage(client, carrier, keys[start]!.awb, keys[i]!.awb, where);
        start = i + 1;
        polls = 0;
      }
      last = keys[keys.length - 1]!.awb;
      if (keys.length < keysPerQuery) break;
    }
  }
}

async function readPage(client: ClickHouseClient, carrier: string, firstAwb: string, lastAwb: string, where: string): Promise<PollPage> {
  const rows = await withReadRetry(async () => (await client.query({
    query: `SELECT ${POLL_COLUMNS} FROM carrier_polls
      WHERE carrier = ${sqlString(carrier)} AND awb >= ${sqlString(firstAwb)} AND awb <= ${sqlString(lastAwb)} AND ${where}
      ORDER BY awb, polled_at, polled_at_ms, poll_id, ingest_version DESC`,
    format: 'JSONEachRow',
  })).json<CarrierPollsRow>());
  const polls: StoredPoll[] = [];
  let previous: string | null = null;
  for (const row of rows) {
    if (row.poll_id === previous) continue;
    previous = row.poll_id;
    polls.push(rebuildPoll(row));
  }
  return { carrier, firstAwb, lastAwb, polls };
}
