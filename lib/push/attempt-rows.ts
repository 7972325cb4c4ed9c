import type { Kv } from '../kv/index.ts';
import { DAY_MS, MINUTE_MS } from '../time/index.ts';
import { pushKeys } from './keys.ts';

/** A row of ClickHouse `webhook_deliveries` (contracts.md). */
export interface DeliveryRow {
  event_id: string;
  endpoint_id: string;
  key_prefix: string;
  type: string;
  carrier: string;
  awb: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  attempted_at: string;
}

/**
 * A row the writer has not confirmed in ClickHouse this long after its attempt began is the
 * reconciler's: longer than an attempt (15 s timeout) plus the writer's batching and retries.
 */
export const ORPHAN_AFTER_MS = 2 * MINUTE_MS;
/** A row no one could write in a week (ClickHouse away that long) is given up, as its event is. */
const ROW_KEPT_MS = 8 * DAY_MS;
/** What an attempt's row says when its process stopped before the outcome was known. */
export const INTERRUPTED = 'interrupted: the dispatcher stopped during the attempt; the endpoint may have received it';

/**
 * Every attempt is a row of webhook_deliveries, also when the dispatcher dies (contracts.md). The
 * row is stored with the push state before the request is sent (as "interrupted") and replaced
 * by the outcome in the same atomic step that records the attempt; it leaves the store only once
 * ClickHouse has it. Rows a dead process left behind are written by the next dispatcher's
 * reconciler: an attempt that reached an endpoint is never missing. (A kill between ClickHouse's
 * insert and the clean-up can write one row twice; identical rows, `SELECT DISTINCT` removes them.)
 */
export class AttemptRowOutbox {
  private readonly kv: Kv;
  private readonly clock: () => number;
  private readonly orphanAfterMs: number;

  constructor(kv: Kv, options: { clock?: () => number; orphanAfterMs?: number } = {}) {
    this.kv = kv;
    this.clock = options.clock ?? Date.now;
    this.orphanAfterMs = options.orphanAfterMs ?? ORPHAN_AFTER_MS;
  }

  /**
   * The row as "interrupted", to be written in the step that begins the attempt (before the send),
   * and its member; `watch` then schedules its reconciliation.
   */
  prepare(row: DeliveryRow): { member: string; write: { key: string; value: DeliveryRow; ttlMs: number } } {
    // The start time too: rows of one attempt number never share a key.
    const rowId = `${row.event_id}:${row.endpoint_id}:${row.attempt}:${Date.parse(row.attempted_at)}`;
    const interrupted = { ...row, status_code: null, latency_ms: 0, error: INTERRUPTED };
    return { member: `${row.key_prefix}|${rowId}`, write: { key: pushKeys.attemptRow(row.key_prefix, rowId), value: interrupted, ttlMs: ROW_KEPT_MS } };
  }

  /** Schedules the row's reconciliation, in case its writer never confirms it. */
  async watch(member: string): Promise<void> {
    await this.kv.schedule(pushKeys.attemptRowsDue(), member, this.clock() + this.orphanAfterMs);
  }

  /** The write that replaces the row with the attempt's outcome (inside the attempt's own step). */
  outcome(member: string, row: DeliveryRow): { key: string; value: DeliveryRow; ttlMs: number } {
    return { key: pushKeys.attemptRow(...splitMember(member)), value: row, ttlMs: ROW_KEPT_MS };
  }

  /** ClickHouse has the row: it leaves the store. */
  async written(member: string): Promise<void> {
    const [prefix, rowId] = splitMember(member);
    await this.kv.unschedule(pushKeys.attemptRowsDue(), member);
    await this.kv.delete(pushKeys.attemptRow(prefix, rowId));
  }

  /** Rows whose writer never confirmed them (its process died), claimed for a while by this caller. */
  async orphans(limit = 500): Promise<{ member: string; row: DeliveryRow }[]> {
    const members = await this.kv.claimDue(pushKeys.attemptRowsDue(), this.clock(), this.orphanAfterMs, limit);
    const rows = await this.kv.getMany<DeliveryRow>(members.map((m) => pushKeys.attemptRow(...splitMember(m))));
    const found: { member: string; row: DeliveryRow }[] = [];
    for (const [i, member] of members.entries()) {
      const row = rows[i];
      if (row) found.push({ member, row });
      else await this.kv.unschedule(pushKeys.attemptRowsDue(), member);
    }
    return found;
  }
}

function splitMember(member: string): [string, string] {
  const at = member.indexOf('|');
  return [member.slice(0, at), member.slice(at + 1)];
}
