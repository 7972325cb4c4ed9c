/** Reads of `shipments` for the poller: which shipments are still moving and when they were polled. */

import type { ClickHouseClient } from './client.ts';
import { sqlInt } from './sql.ts';
import type { KeyMode } from '../schemas/index.ts';

/** A shipment the poller may re-poll (structurally lib/poller's RefreshCandidate). */
export interface ActiveShipment {
  carrier: string;
  awb: string;
  mode: KeyMode;
  /** Epoch ms of the newest poll that found the shipment. */
  lastPolledMs: number;
}

/** Stages after which nothing changes (decisions.md "Terminal"). */
const TERMINAL_STAGES = ['delivered', 'rto_delivered', 'cancelled'];

/**
 * Shipments whose latest state (argMax by version, exact before merges) is not terminal and whose
 * newest poll is at or after `sinceMs`, oldest poll first. Reads only rows updated since then.
 */
export async function activeShipments(client: ClickHouseClient, sinceMs: number): Promise<ActiveShipment[]> {
  const since = Math.max(0, Math.floor(sinceMs));
  const result = await client.query({
    query: `
      SELECT carrier, awb, mode, tupleElement(latest, 1) AS latest_stage, tupleElement(latest, 2) AS last_polled_ms
      FROM
      (
        SELECT carrier, awb, mode, argMax(tuple(stage, version), tuple(version, ingest_version)) AS latest
        FROM shipments
        WHERE updated_at >= toDateTime(${sqlInt(Math.floor(since / 1000))}, 'UTC') AND version >= ${sqlInt(since)}
        GROUP BY carrier, awb, mode
      )
      WHERE latest_stage NOT IN (${TERMINAL_STAGES.map((s) => `'${s}'`).join(', ')})
      ORDER BY last_polled_ms, carrier, awb`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ carrier: string; awb: string; mode: string; last_polled_ms: string | number }>();
  return rows
    .filter((r): r is typeof r & { mode: KeyMode } => r.mode === 'live' || r.mode === 'test')
    .map((r) => ({ carrier: r.carrier, awb: r.awb, mode: r.mode, lastPolledMs: Number(r.last_polled_ms) }));
}
