/**
 * `replay --from-clickhouse --diff | --apply`: the window read as pages of whole shipments
 * (poll-reader.ts), each planned against what ClickHouse holds for it (page-plan.ts). The diff is
 * one read of the window; the apply reads it again and writes each page's rows, checkpointing
 * after every page, then collapses the rows it replaced (replay-apply.ts).
 */
import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '../clickhouse/client.ts';
import type { PollWindow } from '../clickhouse/events.ts';
import { pollPages, type PageCursor, type PollPage } from '../clickhouse/poll-reader.ts';
import {
  APPLY_TABLES, ApplyInserter, collapseReplaced, pageState, readCheckpoint, writeCheckpoint,
  type ApplyTable, type Checkpoint, type CollapseReport,
} from '../clickhouse/replay-apply.ts';
import type { RuleSet } from '../normalize/index.ts';
import { addDiffReport, emptyDiffReport, type DiffReport } from './diff.ts';
import { planPage, type PagePlan } from './page-plan.ts';

export type TableCounts = Record<ApplyTable, number>;
const zero = (): TableCounts => ({ carrier_polls: 0, events: 0, shipments: 0 });

export interface ClickHouseRunOptions {
  window: PollWindow;
  rules: RuleSet;
  /** Polls per page (whole shipments). Default 20,000. */
  pollsPerPage?: number;
  /** After each page: polls read so far in this pass. */
  onProgress?(polls: number): void;
  /** Stops between pages, and between a page's inserts (an apply resumes from the last finished page). */
  signal?: AbortSignal;
}

export interface ClickHouseDiff {
  report: DiffReport;
  polls: number;
  pages: number;
  /** Polls that cannot be stored (skipped by diff and apply alike). */
  invalid: number;
  /** Rows an apply would write: those not stored under the current rules yet. */
  toWrite: TableCounts;
}

/**
 * Pages with their plans. The next page and its stored state are read while this one is planned
 * (and, in an apply, written): ClickHouse works on the other core meanwhile. Pages are disjoint AWB
 * ranges, so what a page's writes change is never part of the next page's state.
 */
async function* plannedPages(
  client: ClickHouseClient, options: ClickHouseRunOptions, after: PageCursor | null,
): AsyncGenerator<{ page: PollPage; plan: PagePlan; maxIngestVersion: number }> {
  const pages = pollPages(client, options.window, { after, pollsPerPage: options.pollsPerPage });
  const fetchNext = async () => {
    const next = await pages.next();
    if (next.done) return null;
    return { page: next.value, state: await pageState(client, next.value.carrier, next.value.firstAwb, next.value.lastAwb) };
  };
  let next = fetchNext();
  try {
    for (;;) {
      const current = await next;
      if (!current) return;
      next = fetchNext();
      // Awaited on the next turn of the loop; a run stopped before then must not leave it unhandled.
      next.catch(() => {});
      options.signal?.throwIfAborted();
      const { page, state } = current;
      yield { page, plan: planPage(page.polls, state, options.rules), maxIngestVersion: state.maxIngestVersion };
    }
  } finally {
    await next.catch(() => null);
    await pages.return(undefined);
  }
}

/** What the current rules change in the window's stored events; nothing is written. */
export async function diffClickHouse(client: ClickHouseClient, options: ClickHouseRunOptions): Promise<ClickHouseDiff> {
  const diff: ClickHouseDiff = { report: emptyDiffReport(), polls: 0, pages: 0, invalid: 0, toWrite: zero() };
  for await (const { plan } of plannedPages(client, options, null)) {
    addDiffReport(diff.report, plan.report);
    diff.polls += plan.polls;
    diff.pages++;
    diff.invalid += plan.invalid.length;
    for (const t of APPLY_TABLES) diff.toWrite[t] += plan.rows[t].length;
    options.onProgress?.(diff.polls);
  }
  return diff;
}

/** The window as checkpoints name it. */
export function describeWindow(window: PollWindow): string {
  const at = (v: string | number | undefined) => (v === undefined ? '' : new Date(typeof v === 'number' ? v : Date.parse(v)).toISOString());
  return `since=${at(window.since)} until=${at(window.until)} carriers=${window.carriers ? [...window.carriers].sort().join(',') : '*'}`;
}

/** One apply run: the same rules over the same window (a resumed run has the same id). */
export function applyRunId(mappingVersion: string, window: PollWindow): string {
  return createHash('sha256').update(`${mappingVersion}\u0000${describeWindow(window)}`).digest('hex').slice(0, 20);
}

export interface ApplyResult {
  runId: string;
  /** The checkpoint it continued from, when an earlier run of the same id was interrupted. */
  resumedFrom: Checkpoint | null;
  pages: number;
  polls: number;
  written: TableCounts;
  /** Null when nothing was written (already applied), so nothing needed collapsing. */
  collapse: CollapseReport | null;
}

export interface ApplyOptions extends ClickHouseRunOptions {
  /** After each insert of a page (tests interrupt a run here, between a page's tables). */
  onInsert?(table: ApplyTable, page: number): void;
}

/**
 * Writes the current rules' rows for the window. Resumes after the last finished page of an
 * interrupted run with the same id; a page cut half way is planned again against what landed, so
 * only its missing rows are written. Idempotent: rows already stored under these rules are skipped.
 */
export async function applyClickHouse(client: ClickHouseClient, options: ApplyOptions): Promise<ApplyResult> {
  const mappingVersion = options.rules.mappingVersion;
  const window = describeWindow(options.window);
  const runId = applyRunId(mappingVersion, options.window);
  const previous = await readCheckpoint(client, runId);
  const inserter = new ApplyInserter(client);
  const resumedFrom = previous && previous.state !== 'done' ? previous : null;
  const result: ApplyResult = { runId, resumedFrom, pages: 0, polls: 0, written: zero(), collapse: null };
  let startedVersion = resumedFrom?.started_version ?? 0;
  let rowsWritten = resumedFrom?.rows_written ?? 0;

  if (resumedFrom?.state !== 'collapsing') {
    const after = resumedFrom && resumedFrom.carrier !== '' ? { carrier: resumedFrom.carrier, awb: resumedFrom.awb } : null;
    for await (const { page, plan, maxIngestVersion } of plannedPages(client, options, after)) {
      const stamp = inserter.stamp(maxIngestVersion);
      if (startedVersion === 0) startedVersion = stamp.ingest_version;
      // Polls first, shipments last, as the normalizer's writer: no shipments row before its events.
      for (const table of APPLY_TABLES) {
        options.signal?.throwIfAborted();
        await inserter.insert(table, plan.rows[table], stamp);
        result.written[table] += plan.rows[table].length;
        rowsWritten += plan.rows[table].length;
        options.onInsert?.(table, result.pages + 1);
      }
      result.pages++;
      result.polls += plan.polls;
      await writeCheckpoint(client, {
        run_id: runId, mapping_version: mappingVersion, window, state: 'writing', carrier: page.carrier, awb: page.lastAwb,
        pages: (resumedFrom?.pages ?? 0) + result.pages, polls: (resumedFrom?.polls ?? 0) + result.polls, rows_written: rowsWritten,
        started_version: startedVersion,
      });
      options.onProgress?.(result.polls);
    }
  }
  const checkpoint = {
    run_id: runId, mapping_version: mappingVersion, window, carrier: '', awb: '', pages: (resumedFrom?.pages ?? 0) + result.pages,
    polls: (resumedFrom?.polls ?? 0) + result.polls, rows_written: rowsWritten, started_version: startedVersion,
  };
  if (rowsWritten > 0) {
    await writeCheckpoint(client, { ...checkpoint, state: 'collapsing' });
    options.signal?.throwIfAborted();
    result.collapse = await collapseReplaced(client, mappingVersion, startedVersion);
  }
  await writeCheckpoint(client, { ...checkpoint, state: 'done' });
  return result;
}
