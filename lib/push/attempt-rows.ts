import type { Kv } from '../kv/index.ts';
import { MINUTE_MS } from '../time/index.ts';
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

  constructor(kv: Kv, clock: () => number = Date.now) {
    this.kv = kv;
    this.clock = clock;
  }

  /** Before the send: the row as "interrupted", and its reconciliation scheduled. Answers its member. */
  async begin(row: DeliveryRow): Promise<string> {
    const rowId = `${row.event_id}:${row.endpoint_id}:${row.attempt}`;
    await this.kv.set(pushKeys.attemptRow(row.key_prefix, rowId), { ...row, status_code: null, latency_ms: 0, error: INTERRUPTED });
    const member = `${row.key_prefix}|${rowId}`;
    await this.kv.schedule(pushKeys.attemptRowsDue(), member, this.clock() + ORPHAN_AFTER_MS);
    return member;
  }

  /** The write that replaces the row with the attempt's outcome (inside the attempt's own step). */
  outcome(row: DeliveryRow): { key: string; value: DeliveryRow } {
    return { key: pushKeys.attemptRow(row.key_prefix, `${row.event_id}:${row.endpoint_id}:${row.attempt}`), value: row };
  }

  /** ClickHouse has the row: it leaves the store. */
  async written(member: string): Promise<void> {
    const [prefix, rowId] = splitMember(member);
    await this.kv.unschedule(pushKeys.attemptRowsDue(), member);
    await this.kv.delete(pushKeys.attemptRow(prefix, rowId));
  }

  /** Rows whose writer never confirmed them (its process died), claimed for a while by this caller. */
  async orphans(limit = 500): Promise<{ member: string; row: DeliveryRow }[]> {
    const members = await this.kv.claimDue(pushKeys.attemptRowsDue(), this.clock(), ORPHAN_AFTER_MS, limit);
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
