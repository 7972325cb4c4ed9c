/**
 * What an empty replay says: the span the stored polls cover, so a window that missed them (a
 * guide's literal dates, a typo in a year) is named as the reason instead of "compared 0 events".
 */
import type { ClickHouseClient } from '../clickhouse/client.ts';
import { withReadRetry } from '../clickhouse/read-retry.ts';
import { sqlStringList } from '../clickhouse/sql.ts';
import type { PollFilter } from './sources.ts';

export interface PollSpan {
  count: number;
  firstMs: number | null;
  lastMs: number | null;
}

/** A running span of the polls a local source held (before the window filter). */
export function emptySpan(): PollSpan {
  return { count: 0, firstMs: null, lastMs: null };
}

export function widenSpan(span: PollSpan, polledAt: string): void {
  const at = Date.parse(polledAt);
  if (!Number.isFinite(at)) return;
  span.count++;
  span.firstMs = span.firstMs === null ? at : Math.min(span.firstMs, at);
  span.lastMs = span.lastMs === null ? at : Math.max(span.lastMs, at);
}

/** The span of carrier_polls (of the filter's carriers, when it names some), whatever the window. */
export async function storedPollSpan(client: ClickHouseClient, carriers: ReadonlySet<string> | null): Promise<PollSpan> {
  const where = carriers?.size ? `WHERE carrier IN ${sqlStringList([...carriers])}` : '';
  const [row] = await withReadRetry(async () => (await client.query({
    query: `SELECT count() AS c, toUInt32(min(polled_at)) AS first, toUInt32(max(polled_at)) AS last FROM carrier_polls ${where}`, format: 'JSONEachRow',
  })).json<{ c: string; first: string | number; last: string | number }>());
  const count = Number(row?.c ?? 0);
  return count === 0 ? emptySpan() : { count, firstMs: Number(row!.first) * 1000, lastMs: Number(row!.last) * 1000 };
}

/** The line for a window that held no polls: the window asked for, and where the stored polls are. */
export function emptyWindowMessage(filter: PollFilter, span: PollSpan, where: string): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  const asked = [filter.sinceMs === null ? 'the beginning' : iso(filter.sinceMs), filter.untilMs === null ? 'now' : iso(filter.untilMs)].join(' to ');
  const carriers = filter.carriers?.size ? ` for ${[...filter.carriers].sort().join(', ')}` : '';
  if (span.count === 0 || span.firstMs === null || span.lastMs === null) {
    return `replay: no polls in the window (${asked})${carriers}: ${where} holds no polls${carriers} at all`;
  }
  const first = iso(span.firstMs);
  const last = iso(span.lastMs);
  return `replay: no polls in the window (${asked})${carriers}; the ${span.count} stored polls in ${where}${carriers} were polled from ${first} to ${last}: `
    + `choose --since/--until within that span`;
}
