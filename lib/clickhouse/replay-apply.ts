/**
 * ClickHouse side of `replay --apply` (lib/replay/README.md explains the design):
 * what a page of shipments holds now, the inserts of its re-normalized rows, the run's checkpoint,
 * and the final collapse of the rows the apply replaced.
 *
 * Why replacing works without deletes: `events` is ReplacingMergeTree(ingest_version) keyed by
 * (carrier, awb, occurred_at, event_id) and a re-normalized event keeps its event_id and time, so
 * the apply's row (a newer ingest_version) wins in FINAL, in argMax(..., ingest_version) and on
 * merge; `carrier_polls` likewise. `shipments` is ReplacingMergeTree(version = polled_at ms): the
 * apply's row of a poll has the same version as the row it replaces; FINAL and merges keep the last
 * inserted of equal versions (checked on 18.16 and current releases), and argMax by
 * (version, ingest_version) picks it too. Until a merge, plain count() sees both rows, so the apply
 * ends by collapsing what it touched (OPTIMIZE ... FINAL), after which every query is exact.
 */
import { finished } from 'node:stream/promises';
import { ExponentialBackoff, handleWhen, retry, type RetryPolicy } from 'cockatiel';
import type { ClickHouseClient } from './client.ts';
import { isRetryableClickHouseError } from './client.ts';
import { toClickHouseDateTime } from './datetime.ts';
import { jsonEachRowStream } from './json-each-row.ts';
import { withReadRetry } from './read-retry.ts';
import type { CarrierPollRow, EventRow, MappedEvent, ShipmentRow } from './rows.ts';
import { sqlInt, sqlString } from './sql.ts';

/** The latest stored row of an event (argMax by ingest_version): what the rules made of it, and which rules. */
export type StoredEventState = MappedEvent & Pick<EventRow, 'mapping_version'>;

export interface PageState {
  events: StoredEventState[];
  /** `awb \0 mode \0 poll_id \0 mapping_version` of every stored shipments row of the page. */
  shipmentRows: Set<string>;
  /** Highest ingest_version among the page's stored rows: the apply writes above it. */
  maxIngestVersion: number;
}

export function shipmentRowIdentity(row: { awb: string; mode: string; poll_id: string; mapping_version: string }): string {
  return `${row.awb}\u0000${row.mode}\u0000${row.poll_id}\u0000${row.mapping_version}`;
}

function range(carrier: string, firstAwb: string, lastAwb: string): string {
  return `carrier = ${sqlString(carrier)} AND awb >= ${sqlString(firstAwb)} AND awb <= ${sqlString(lastAwb)}`;
}

/** A row of pageState's events query, named as it names them: the awb as shipment_awb, the top ingest_version (UInt64, as text) as iv. */
type PageEventRow = Omit<StoredEventState, 'carrier' | 'awb'> & { shipment_awb: string; iv: string };

/** What `events` and `shipments` hold for the AWBs [firstAwb, lastAwb] of one carrier (a primary-key range). */
export async function pageState(client: ClickHouseClient, carrier: string, firstAwb: string, lastAwb: string): Promise<PageState> {
  const where = range(carrier, firstAwb, lastAwb);
  const [events, shipments] = await Promise.all([
    withReadRetry(() => client.query({
      // One tuple: argMax of a Nullable column alone skips NULLs (lib/clickhouse/README.md).
      query: `SELECT event_id, awb AS shipment_awb, tupleElement(latest, 1) AS status, tupleElement(latest, 2) AS code,
          tupleElement(latest, 3) AS reason_code, tupleElement(latest, 4) AS mapping_version, top AS iv
        FROM (
          SELECT awb, event_id, argMax(tuple(status, code, reason_code, mapping_version), ingest_version) AS latest, max(ingest_version) AS top
          FROM events WHERE ${where} GROUP BY awb, event_id
        )`,
      format: 'JSONEachRow',
    }).then((r) => r.json<PageEventRow>())),
    withReadRetry(() => client.query({
      query: `SELECT awb, mode, poll_id, mapping_version, ingest_version AS iv FROM shipments WHERE ${where}`,
      format: 'JSONEachRow',
    }).then((r) => r.json<{ awb: string; mode: string; poll_id: string; mapping_version: string; iv: string }>())),
  ]);
  let maxIngestVersion = 0;
  const state: PageState = { events: [], shipmentRows: new Set(), maxIngestVersion: 0 };
  for (const e of events) {
    maxIngestVersion = Math.max(maxIngestVersion, Number(e.iv));
    state.events.push({
      event_id: e.event_id, carrier, awb: e.shipment_awb, status: e.status, code: e.code, reason_code: e.reason_code, mapping_version: e.mapping_version,
    });
  }
  for (const s of shipments) {
    maxIngestVersion = Math.max(maxIngestVersion, Number(s.iv));
    state.shipmentRows.add(shipmentRowIdentity(s));
  }
  state.maxIngestVersion = maxIngestVersion;
  return state;
}

export interface ApplyRows {
  carrier_polls: CarrierPollRow[];
  events: EventRow[];
  shipments: ShipmentRow[];
}

export const APPLY_TABLES = ['carrier_polls', 'events', 'shipments'] as const;
export type ApplyTable = (typeof APPLY_TABLES)[number];

export interface ApplyInserterOptions {
  /** Retries of a transient failure (network, timeout, too many parts). Default 5. */
  maxRetries?: number;
  initialRetryDelayMs?: number;
}

/** Inserts of the apply: JSONEachRow like the normalizer's writer, retried on transient errors. */
export class ApplyInserter {
  private readonly policy: RetryPolicy;
  private lastVersion = 0;

  private readonly client: ClickHouseClient;
  constructor(client: ClickHouseClient, options: ApplyInserterOptions = {}) {
    this.client = client;
    this.policy = retry(handleWhen(isRetryableClickHouseError), {
      maxAttempts: options.maxRetries ?? 5,
      backoff: new ExponentialBackoff({ initialDelay: options.initialRetryDelayMs ?? 100, maxDelay: 5_000 }),
    });
  }

  /**
   * An ingest stamp above `atLeast` (the page's stored rows) and above every stamp given before:
   * the apply's rows must be the newest written, whatever the clocks of earlier writers said.
   */
  stamp(atLeast: number): { ingested_at: string; ingest_version: number } {
    const now = Date.now();
    this.lastVersion = Math.max(now, atLeast + 1, this.lastVersion + 1);
    return { ingested_at: toClickHouseDateTime(Math.min(this.lastVersion, now)), ingest_version: this.lastVersion };
  }

  /**
   * One INSERT per table. A retried insert that had landed the first time leaves two identical rows
   * (same key, same version): they collapse on merge and in FINAL, and read the same in argMax.
   */
  async insert(table: ApplyTable, rows: readonly object[], stamp: { ingested_at: string; ingest_version: number }): Promise<void> {
    if (rows.length === 0) return;
    await this.policy.execute(async () => {
      // `table` is one of APPLY_TABLES, never outside input.
      const { stream } = await this.client.exec({ query: `INSERT INTO ${table} FORMAT JSONEachRow`, values: jsonEachRowStream(rows, stamp) });
      await finished(stream.resume());
    });
  }
}

export type CheckpointState = 'writing' | 'collapsing' | 'done';

export interface Checkpoint {
  run_id: string;
  mapping_version: string;
  window: string;
  state: CheckpointState;
  /** Last finished page's last key; '' before the first page. */
  carrier: string;
  awb: string;
  pages: number;
  polls: number;
  rows_written: number;
  started_version: number;
  updated_at: string;
}

/** The run's latest checkpoint, or null when it never started. */
export async function readCheckpoint(client: ClickHouseClient, runId: string): Promise<Checkpoint | null> {
  const result = await withReadRetry(() => client.query({
    query: `SELECT run_id, tupleElement(c, 1) AS mapping_version, tupleElement(c, 2) AS window, tupleElement(c, 3) AS state,
        tupleElement(c, 4) AS carrier, tupleElement(c, 5) AS awb, tupleElement(c, 6) AS pages, tupleElement(c, 7) AS polls,
        tupleElement(c, 8) AS rows_written, tupleElement(c, 9) AS started_version, tupleElement(c, 10) AS updated_at
      FROM (
        SELECT run_id, argMax(tuple(mapping_version, window, state, carrier, awb, pages, polls, rows_written, started_version, updated_at), version) AS c
        FROM replay_checkpoints WHERE run_id = ${sqlString(runId)} GROUP BY run_id
      )`,
    format: 'JSONEachRow',
  }));
  const [row] = await result.json<Record<keyof Checkpoint, string>>();
  if (!row) return null;
  return {
    run_id: row.run_id, mapping_version: row.mapping_version, window: row.window, state: row.state as CheckpointState,
    carrier: row.carrier, awb: row.awb, pages: Number(row.pages), polls: Number(row.polls),
    rows_written: Number(row.rows_written), started_version: Number(row.started_version), updated_at: row.updated_at,
  };
}

let lastCheckpointVersion = 0;

export async function writeCheckpoint(client: ClickHouseClient, checkpoint: Omit<Checkpoint, 'updated_at'>): Promise<void> {
  lastCheckpointVersion = Math.max(Date.now(), lastCheckpointVersion + 1);
  const row = { ...checkpoint, updated_at: toClickHouseDateTime(Date.now()), version: lastCheckpointVersion };
  // A checkpoint row written twice is the same row: retrying is safe.
  await withReadRetry(() => client.exec({ query: 'INSERT INTO replay_checkpoints FORMAT JSONEachRow', values: jsonEachRowStream([row]) })
    .then(({ stream }) => finished(stream.resume())));
}

/** Month partitions (toYYYYMM) holding rows this run wrote (ingest_version ≥ its first stamp). */
async function touchedMonths(
  client: ClickHouseClient, table: 'carrier_polls' | 'events', timeColumn: string, mappingVersion: string, sinceVersion: number,
): Promise<number[]> {
  const rows = await withReadRetry(async () => (await client.query({
    query: `SELECT DISTINCT toYYYYMM(${timeColumn}) AS m FROM ${table}
      WHERE mapping_version = ${sqlString(mappingVersion)} AND ingest_version >= ${sqlInt(sinceVersion)} ORDER BY m`,
    format: 'JSONEachRow',
  })).json<{ m: number | string }>());
  return rows.map((r) => Number(r.m));
}

export interface CollapseReport {
  partitions: number;
  durationMs: number;
}

/**
 * Merges away the rows the apply replaced: each month of carrier_polls and events it wrote into,
 * and shipments (not partitioned). `optimize_throw_if_noop`: a merge ClickHouse declines (parts
 * busy in another merge) is an error, retried, never a silent no-op.
 */
export async function collapseReplaced(client: ClickHouseClient, mappingVersion: string, sinceVersion: number): Promise<CollapseReport> {
  const started = performance.now();
  const statements: string[] = [];
  for (const m of await touchedMonths(client, 'carrier_polls', 'polled_at', mappingVersion, sinceVersion)) {
    statements.push(`OPTIMIZE TABLE carrier_polls PARTITION ${sqlInt(m)} FINAL`);
  }
  for (const m of await touchedMonths(client, 'events', 'occurred_at', mappingVersion, sinceVersion)) {
    statements.push(`OPTIMIZE TABLE events PARTITION ${sqlInt(m)} FINAL`);
  }
  statements.push('OPTIMIZE TABLE shipments FINAL');
  const policy = retry(handleWhen(() => true), { maxAttempts: 5, backoff: new ExponentialBackoff({ initialDelay: 500, maxDelay: 10_000 }) });
  for (const query of statements) {
    await policy.execute(() => client.command({ query, clickhouse_settings: { optimize_throw_if_noop: 1 } }));
  }
  return { partitions: statements.length, durationMs: performance.now() - started };
}
