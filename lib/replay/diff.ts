/**
 * `replay --diff`: what the current mapping rules would change in the events already stored,
 * per carrier and status, computed before anything is written.
 */
import type { MappedEvent } from '../clickhouse/rows.ts';

export interface DiffRow {
  carrier: string;
  /** `status/code` (reason) as stored, or null for an event the stored data does not have. */
  from: string | null;
  /** `status/code` (reason) under the current rules, or null for a stored event the replay did not produce. */
  to: string | null;
  count: number;
}

export interface DiffReport {
  compared: number;
  unchanged: number;
  changed: number;
  added: number;
  missing: number;
  rows: DiffRow[];
}

function label(e: MappedEvent): string {
  return `${e.status}/${e.code}${e.reason_code ? ` (${e.reason_code})` : ''}`;
}

/** Per carrier, most frequent first; ties by label, so equal diffs print (and compare) equal. */
function byCarrierAndCount(a: DiffRow, b: DiffRow): number {
  return a.carrier.localeCompare(b.carrier) || b.count - a.count || String(a.from).localeCompare(String(b.from)) || String(a.to).localeCompare(String(b.to));
}

/**
 * Compares by event_id (stable per carrier + AWB + time + raw status + location). Only shipments present in
 * `fresh` are compared, so a replay of part of the log reports nothing about the rest.
 */
export function diffEvents(stored: readonly MappedEvent[], fresh: readonly MappedEvent[]): DiffReport {
  const freshById = new Map(fresh.map((e) => [e.event_id, e]));
  const shipments = new Set(fresh.map((e) => `${e.carrier}:${e.awb}`));
  const counts = new Map<string, DiffRow>();
  const bump = (carrier: string, from: string | null, to: string | null) => {
    const key = `${carrier}|${from}|${to}`;
    const row = counts.get(key) ?? { carrier, from, to, count: 0 };
    row.count++;
    counts.set(key, row);
  };
  const report: DiffReport = { compared: 0, unchanged: 0, changed: 0, added: 0, missing: 0, rows: [] };
  const seen = new Set<string>();
  for (const old of stored) {
    if (!shipments.has(`${old.carrier}:${old.awb}`)) continue;
    seen.add(old.event_id);
    const now = freshById.get(old.event_id);
    report.compared++;
    if (!now) {
      report.missing++;
      bump(old.carrier, label(old), null);
    } else if (label(old) === label(now)) {
      report.unchanged++;
    } else {
      report.changed++;
      bump(old.carrier, label(old), label(now));
    }
  }
  for (const now of freshById.values()) {
    if (seen.has(now.event_id)) continue;
    report.added++;
    bump(now.carrier, null, label(now));
  }
  report.rows = [...counts.values()].sort(byCarrierAndCount);
  return report;
}

/** A readable table of the report, for people (stderr). */
export function formatDiff(report: DiffReport): string {
  const lines = [
    `compared ${report.compared} stored events: ${report.unchanged} unchanged, ${report.changed} changed, ` +
      `${report.added} new, ${report.missing} not produced by the current rules`,
  ];
  for (const row of report.rows) {
    lines.push(`  ${row.carrier.padEnd(22)} ${(row.from ?? '(none)').padEnd(40)} → ${(row.to ?? '(none)').padEnd(40)} ${row.count}`);
  }
  return lines.join('\n');
}

export function emptyDiffReport(): DiffReport {
  return { compared: 0, unchanged: 0, changed: 0, added: 0, missing: 0, rows: [] };
}

/**
 * Adds `part` into `total` (diffs computed a page of shipments at a time). Pages never share a
 * shipment, so the sum is the diff of the whole run.
 */
export function addDiffReport(total: DiffReport, part: DiffReport): DiffReport {
  total.compared += part.compared;
  total.unchanged += part.unchanged;
  total.changed += part.changed;
  total.added += part.added;
  total.missing += part.missing;
  const rows = new Map(total.rows.map((r) => [`${r.carrier}|${r.from}|${r.to}`, r]));
  for (const row of part.rows) {
    const key = `${row.carrier}|${row.from}|${row.to}`;
    const known = rows.get(key);
    if (known) known.count += row.count;
    else rows.set(key, { ...row });
  }
  total.rows = [...rows.values()].sort(byCarrierAndCount);
  return total;
}
