/**
 * Closures in ClickHouse: the lane_closures row of a shipment that closed, derived from the rows a
 * poll writes (its shipments row and event rows) by lib/lanes `laneClosureOf`, and the sink that
 * writes them after the rows they come from.
 */
import { laneClosureOf, laneParts, type LaneClosure } from '../lanes/index.ts';
import type { RowSink } from './rows.ts';
import type { ClickHouseClient } from './client.ts';
import { fromClickHouseDateTime, toClickHouseDateTime } from './datetime.ts';
import type { PollRows } from './rows.ts';
import { sqlStringList } from './sql.ts';

/** The closure of the shipment a poll's rows describe, null unless it closed on a lane. */
export function closureOfRows(rows: PollRows): LaneClosure | null {
  const s = rows.shipment;
  if (!s) return null;
  return laneClosureOf({
    carrier: s.carrier,
    awb: s.awb,
    mode: s.mode,
    lane: s.lane,
    stage: s.stage,
    eddMs: s.estimated_delivery_at === null ? null : fromClickHouseDateTime(s.estimated_delivery_at),
    attempts: s.attempts,
    transitDays: s.transit_days,
    events: rows.events.map((e) => ({
      event_id: e.event_id, occurredMs: fromClickHouseDateTime(e.occurred_at), code: e.code, status: e.status, reason_code: e.reason_code,
    })),
    version: s.version,
  });
}

/** The lane_closures row of a closure (JSONEachRow: every column, DateTime as text). */
export function closureRow(c: LaneClosure, ingestedAtMs: number): Record<string, unknown> {
  const { origin_prefix, destination_prefix } = laneParts(c.lane);
  return {
    lane: c.lane, carrier: c.carrier, origin_prefix, destination_prefix, mode: c.mode, awb: c.awb,
    outcome: c.outcome, closed_at: toClickHouseDateTime(c.closedAtS * 1000), transit_days: c.transitDays,
    on_time: c.onTime, first_attempt: c.firstAttempt, ndr_reasons: c.ndrReasons, version: c.version,
    ingested_at: toClickHouseDateTime(ingestedAtMs),
  };
}

/**
 * Inserts closures not stored yet: a closure is stored when lane_closures holds its shipment at the
 * same or a newer version (one query on the sort key per call), so a re-delivered poll or a re-poll
 * after delivery writes nothing. Returns how many rows were inserted.
 */
export async function writeClosures(client: ClickHouseClient, closures: readonly LaneClosure[], nowMs: number = Date.now()): Promise<number> {
  // The newest closure per shipment within the call.
  const newest = new Map<string, LaneClosure>();
  for (const c of closures) {
    const key = `${c.lane}|${c.carrier}|${c.awb}`;
    const known = newest.get(key);
    if (!known || known.version < c.version) newest.set(key, c);
  }
  if (newest.size === 0) return 0;
  const pending = [...newest.values()];
  const stored = new Map<string, number>();
  // Chunked: 18.16's max_query_size is 256 KiB.
  for (let i = 0; i < pending.length; i += 2_000) {
    const chunk = pending.slice(i, i + 2_000);
    const result = await client.query({
      query: `SELECT lane, carrier, awb, max(version) AS v FROM lane_closures
        WHERE lane IN ${sqlStringList([...new Set(chunk.map((c) => c.lane))])} AND awb IN ${sqlStringList([...new Set(chunk.map((c) => c.awb))])}
        GROUP BY lane, carrier, awb`,
      format: 'JSONEachRow',
    });
    for (const r of await result.json<{ lane: string; carrier: string; awb: string; v: string | number }>()) {
      stored.set(`${r.lane}|${r.carrier}|${r.awb}`, Number(r.v));
    }
  }
  const fresh = pending.filter((c) => (stored.get(`${c.lane}|${c.carrier}|${c.awb}`) ?? -1) < c.version);
  if (fresh.length === 0) return 0;
  await client.insert({ table: 'lane_closures', format: 'JSONEachRow', values: fresh.map((c) => closureRow(c, nowMs)) });
  return fresh.length;
}

/**
 * A RowSink in front of the ClickHouse writer: rows go to the writer as before, and the closures
 * they carry are written once the writer's flush has stored those rows. flush() resolves only when
 * both are stored; if the closure insert fails, the closures stay queued and flush() rejects (the
 * normalizer then retries the flush and commits nothing meanwhile).
 */
export class LaneClosureSink implements RowSink {
  private queued: LaneClosure[] = [];

  private readonly inner: RowSink;
  private readonly client: ClickHouseClient;
  constructor(inner: RowSink, client: ClickHouseClient) {
    this.inner = inner;
    this.client = client;
  }

  write(rows: PollRows | readonly PollRows[]): void {
    this.inner.write(rows);
    for (const r of Array.isArray(rows) ? (rows as readonly PollRows[]) : [rows as PollRows]) {
      const closure = closureOfRows(r);
      if (closure) this.queued.push(closure);
    }
  }

  async flush(): Promise<void> {
    const taken = this.queued;
    this.queued = [];
    try {
      await this.inner.flush();
      await writeClosures(this.client, taken);
    } catch (err) {
      this.queued = taken.concat(this.queued);
      throw err;
    }
  }
}
