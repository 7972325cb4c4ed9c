/** What the API shows of an analysis (lib/analyzer/schemas.ts), and the shipments CSV. Pure. */
import type { z } from 'zod';
import { OUTCOME_OF_STAGE, deliveredByEdd } from './report.ts';
import type { AnalysisSchema, AnalysisSummarySchema } from './schemas.ts';
import { SHIPMENT_CSV_COLUMNS } from './schemas.ts';
import type { AnalysisDoc } from './store.ts';
import type { AnalyzedShipment } from './types.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function analysisSummary(doc: AnalysisDoc): z.infer<typeof AnalysisSummarySchema> {
  return {
    id: doc.id, name: doc.name, status: doc.status,
    status_reason: doc.status === 'failed' ? doc.error : doc.status === 'running' ? doc.held ?? null : null,
    progress: { done: doc.done, total: doc.total },
    created_at: iso(doc.created_ms)!, completed_at: iso(doc.completed_ms),
  };
}

export function analysisView(doc: AnalysisDoc): z.infer<typeof AnalysisSchema> {
  return { ...analysisSummary(doc), rejected_rows: doc.rejected_rows, report: doc.report };
}

/**
 * Where a spreadsheet may start a cell inside a text: at its start, or after any separator it may
 * split on (comma, semicolon, tab, a line break), quotes and spaces skipped — then a formula
 * character (= + - @, tab, CR).
 */
const FORMULA_START = /(^|[,;\t\r\n])([" ]*)([=+\-@\t\r])/g;

/**
 * One CSV cell, safe under any separator a spreadsheet may split on: every place a cell could start
 * with a formula character gets a ' before it (OWASP's CSV injection advice) — not only the start
 * of the text, since a spreadsheet splitting on `;` starts a cell inside `ORD-7;=cmd…` whatever the
 * quotes say (a quote in the middle of its cell is a plain character to it) — and a text holding a
 * separator, a quote or a line break is quoted (RFC 4180). Every text column, the AWB included
 * (`-A1-B1` is a valid AWB). Numbers and booleans are the service's own and written as they are.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = value.replace(FORMULA_START, "$1$2'$3");
  return /[",;\t\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const SHIPMENT_CSV_HEADER = `${SHIPMENT_CSV_COLUMNS.join(',')}\r\n`;

/** One shipment's CSV line (columns as SHIPMENT_CSV_COLUMNS), CRLF-terminated. */
export function shipmentCsvLine(s: AnalyzedShipment): string {
  const found = s.result === 'found';
  const delivered = found && s.stage === 'delivered';
  const error = s.result === 'not_found' ? 'shipment_not_found' : s.result === 'error' ? `upstream_error: ${s.error ?? 'carrier error'}` : null;
  const values: (string | number | boolean | null)[] = [
    s.awb, s.carrier, s.order_id, s.payment_mode, s.status, s.stage, found ? OUTCOME_OF_STAGE[s.stage!] : null,
    found ? s.attempts : null,
    delivered ? s.ndr.length === 0 : null,
    found ? s.ndr.join(';') : null,
    s.transit_days === null ? null : Math.round(s.transit_days * 100) / 100,
    s.origin_pincode, s.destination_pincode, s.lane, iso(s.edd_ms), iso(s.delivered_ms),
    delivered && s.delivered_ms !== null && s.edd_ms !== null ? deliveredByEdd(s.delivered_ms, s.edd_ms) : null,
    delivered && s.delivered_ms !== null && s.promised_by_ms !== null ? s.delivered_ms <= s.promised_by_ms : null,
    found ? s.is_stuck : null,
    s.hours_since_last_scan,
    error,
  ];
  return `${values.map(csvCell).join(',')}\r\n`;
}
