/**
 * Pure: one page of stored polls (whole shipments) and what ClickHouse holds for them → the diff of
 * the current rules against it, and the rows `--apply` writes. No I/O.
 */
import { shipmentRowIdentity, type ApplyRows, type PageState } from '../clickhouse/replay-apply.ts';
import type { StoredPoll } from '../clickhouse/poll-reader.ts';
import { eventRows, shipmentRow, toRows, type EventRow, type MappedEvent, type ShipmentRow } from '../clickhouse/rows.ts';
import { normalizePollTimed, type RuleSet } from '../normalize/index.ts';
import { diffEvents, type DiffReport } from './diff.ts';

export interface PagePlan {
  report: DiffReport;
  /** Rows not yet stored under the current rules: what an apply writes (nothing when applied). */
  rows: ApplyRows;
  polls: number;
  /** Polls the pipeline could not store either (e.g. a time outside ClickHouse's range): skipped. */
  invalid: { poll_id: string; message: string }[];
}

/**
 * Events: one per event_id, the first poll of the page producing it winning (as the normalizer's
 * writer stores them), written when the latest stored row has another mapping_version (or none).
 * Shipments: per AWB and mode, the row of its latest poll in the page, unless stored under these
 * rules already. carrier_polls: each poll whose stored mapping_version differs.
 */
export function planPage(polls: readonly StoredPoll[], state: PageState, rules: RuleSet): PagePlan {
  const version = rules.mappingVersion;
  const rows: ApplyRows = { carrier_polls: [], events: [], shipments: [] };
  const invalid: PagePlan['invalid'] = [];
  const events = new Map<string, EventRow>();
  const latestShipment = new Map<string, ShipmentRow>();
  for (const { poll, mode, mapping_version } of polls) {
    const { result, times } = normalizePollTimed(poll, rules);
    let pollRows;
    try {
      // The carrier_polls row (scans re-serialized) only when it is to be written.
      pollRows = mapping_version !== version
        ? toRows(poll, result, version, mode, times)
        : result.kind === 'found'
          ? { poll: null, events: eventRows(poll, result.shipment, times), shipment: shipmentRow(poll, result.shipment, mode, times) }
          : { poll: null, events: [], shipment: null };
    } catch (err) {
      invalid.push({ poll_id: poll.poll_id, message: (err as Error).message });
      continue;
    }
    if (pollRows.poll) rows.carrier_polls.push(pollRows.poll);
    for (const e of pollRows.events) if (!events.has(e.event_id)) events.set(e.event_id, e);
    if (pollRows.shipment) {
      const key = `${pollRows.shipment.awb}\u0000${mode}`;
      const known = latestShipment.get(key);
      // Polls come in polled_at order; `>=` keeps the later of equal times, as the table's merge does.
      if (!known || pollRows.shipment.version >= known.version) latestShipment.set(key, pollRows.shipment);
    }
  }
  const storedVersion = new Map(state.events.map((e) => [e.event_id, e.mapping_version]));
  for (const e of events.values()) if (storedVersion.get(e.event_id) !== version) rows.events.push(e);
  for (const s of latestShipment.values()) if (!state.shipmentRows.has(shipmentRowIdentity(s))) rows.shipments.push(s);

  const fresh: MappedEvent[] = [...events.values()].map((e) => ({
    event_id: e.event_id, carrier: e.carrier, awb: e.awb, status: e.status, code: e.code, reason_code: e.reason_code,
  }));
  return { report: diffEvents(state.events, fresh), rows, polls: polls.length, invalid };
}
