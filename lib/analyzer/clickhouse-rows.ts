/**
 * ClickHouse `analysis_shipments` (migrations/0015): one row per shipment of a completed analysis,
 * the shipments CSV's columns as typed values. The row converter is pure; the writer inserts an
 * analysis' rows in pages when it completes (distributed mode).
 */
// The pure report module and types only: the analyzer's index reaches push, which reaches ClickHouse.
import { OUTCOME_OF_STAGE, deliveredByEdd } from './report.ts';
import type { AnalysisDoc } from './store.ts';
import type { AnalyzedShipment } from './types.ts';
import type { ClickHouseClient } from '../clickhouse/client.ts';
import { toClickHouseDateTime, toClickHouseDateTimeOrNull } from '../clickhouse/datetime.ts';

/** Rows per insert: an analysis of 20,000 shipments is four inserts, never 20,000. */
const PAGE = 5_000;

const bit = (value: boolean | null) => (value === null ? null : value ? 1 : 0);

export function analysisShipmentRow(
  doc: Pick<AnalysisDoc, 'id' | 'key_prefix' | 'mode' | 'completed_ms' | 'created_ms'>, s: AnalyzedShipment,
): Record<string, unknown> {
  const found = s.result === 'found';
  const delivered = found && s.stage === 'delivered';
  return {
    analysis_id: doc.id,
    key_prefix: doc.key_prefix,
    mode: doc.mode,
    completed_at: toClickHouseDateTime(doc.completed_ms ?? doc.created_ms),
    awb: s.awb,
    carrier: s.carrier ?? '',
    order_id: s.order_id ?? '',
    payment_mode: s.payment_mode ?? '',
    result: s.result,
    status: s.status ?? '',
    current_stage: s.stage ?? '',
    outcome: found ? OUTCOME_OF_STAGE[s.stage!] : '',
    attempts: s.attempts,
    first_attempt_delivered: delivered ? bit(s.ndr.length === 0) : null,
    ndr_reasons: s.ndr,
    transit_days: s.transit_days,
    origin_pincode: s.origin_pincode ?? '',
    destination_pincode: s.destination_pincode ?? '',
    destination_state: s.destination_state ?? '',
    lane: s.lane ?? '',
    carrier_edd: toClickHouseDateTimeOrNull(s.edd_ms),
    delivered_at: toClickHouseDateTimeOrNull(s.delivered_ms),
    on_time_vs_carrier_edd: delivered && s.delivered_ms !== null && s.edd_ms !== null ? bit(deliveredByEdd(s.delivered_ms, s.edd_ms)) : null,
    on_time_vs_promise: delivered && s.delivered_ms !== null && s.promised_by_ms !== null ? bit(s.delivered_ms <= s.promised_by_ms) : null,
    is_stuck: found && s.is_stuck ? 1 : 0,
    hours_since_last_scan: s.hours_since_last_scan,
  };
}

export async function writeAnalysisShipments(client: ClickHouseClient, doc: AnalysisDoc, shipments: readonly AnalyzedShipment[]): Promise<void> {
  for (let i = 0; i < shipments.length; i += PAGE) {
    await client.insert({ table: 'analysis_shipments', format: 'JSONEachRow', values: shipments.slice(i, i + PAGE).map((s) => analysisShipmentRow(doc, s)) });
  }
}
