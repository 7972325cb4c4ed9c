/**
 * The analyzer's state where the keys live: push's key-value store (lib/kv: Redis, or a journal
 * under DATA_DIR), so every API instance serves an analysis and a restart loses none.
 * Every document of one API key carries its prefix as a hash tag, so each atomic step touches one
 * Redis slot: the analysis, its input and result chunks, the key's list and its allowance.
 *
 * Acceptance is one atomic step: the allowance checked and counted, the analysis and its input
 * written, the list entry added — all of it or nothing (a refusal counts and stores nothing).
 */
import { randomBytes } from 'node:crypto';
import type { Kv } from '../kv/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';
import type { AnalysisStatus, AnalyzedShipment, RejectedRow, Report, ShipmentInput } from './types.ts';

/** contracts.md: kept 90 days. */
export const ANALYSIS_RETENTION_MS = 90 * DAY_MS;
/** Shipments per stored chunk: the unit of work, progress and resumption. */
export const CHUNK_SIZE = 200;
/** Analyses a key's list keeps (newest first); older ones expire within 90 days anyway. */
export const LIST_KEEP = 1_000;

export const analyzerKeys = {
  analysis: (prefix: string, id: string) => `an:{${prefix}}:${id}`,
  input: (prefix: string, id: string, chunk: number) => `an:{${prefix}}:${id}:in:${chunk}`,
  output: (prefix: string, id: string, chunk: number) => `an:{${prefix}}:${id}:out:${chunk}`,
  list: (prefix: string) => `analyses:{${prefix}}`,
  usage: (prefix: string) => `analyzer-usage:{${prefix}}`,
  limit: (prefix: string) => `analyzer-limit:{${prefix}}`,
  events: (prefix: string) => `analyzer-events:{${prefix}}`,
  /** Global schedule of analyses to run: members `prefix|id`, leased by the runner that takes one. */
  due: () => 'analyzer-due',
} as const;

export const dueMemberOf = (prefix: string, id: string) => `${prefix}|${id}`;
export function parseDueMember(member: string): { prefix: string; id: string } | null {
  const [prefix, id] = member.split('|');
  return prefix && id ? { prefix, id } : null;
}

export interface AnalysisDoc {
  id: string;
  key_prefix: string;
  mode: KeyMode;
  name: string | null;
  status: AnalysisStatus;
  total: number;
  done: number;
  chunks: number;
  created_ms: number;
  completed_ms: number | null;
  rejected_rows: RejectedRow[];
  /** Rejected rows in all (rejected_rows lists at most MAX_REJECTED_LISTED). */
  rejected_count: number;
  /** The key's period the shipments were counted in (usage given back only to that period). */
  period_start: string;
  /** Shipments given back on completion (carrier errors). */
  given_back: number;
  /** The analysis.completed event's sequence (per key), fixed when it completes. */
  event_sequence: number | null;
  report: Report | null;
  error: string | null;
  /** Why a running analysis waits (its key is suspended or expired); null while it may run. */
  held?: string | null;
  /** Retry rounds of carrier errors made so far (the runner's RETRY_DELAYS_MS). */
  retry_rounds?: number;
}

/** The allowance counter of a key: reset by a new period (renewal starts one). */
interface UsageDoc {
  period_start: string;
  used: number;
}

export interface Allowance {
  used: number;
  limit: number;
}

export type AcceptResult =
  | { ok: true; doc: AnalysisDoc }
  | { ok: false; needed: number; remaining: number; limit: number };

export interface NewAnalysis {
  /** The analysis's id, drawn beforehand (newAnalysisId) when it is reserved on the schedule first. */
  id?: string;
  prefix: string;
  mode: KeyMode;
  name: string | null;
  periodStart: string;
  limit: number;
  shipments: readonly ShipmentInput[];
  rejected: RejectedRow[];
  rejectedCount: number;
  nowMs: number;
}

export const newAnalysisId = () => `an_${randomBytes(15).toString('base64url').replace(/[-_]/g, '0')}`;

function usedIn(doc: UsageDoc | null, periodStart: string): number {
  return doc && doc.period_start === periodStart ? doc.used : 0;
}

export class AnalysisStore {
  readonly kv: Kv;
  private readonly clock: () => number;
  constructor(kv: Kv, clock: () => number = Date.now) {
    this.kv = kv;
    this.clock = clock;
  }

  /** The per-key override of the plan's allowance (admin `analyzer_shipments_limit`), or null. */
  async limitOverride(prefix: string): Promise<number | null> {
    return (await this.kv.get<{ limit: number }>(analyzerKeys.limit(prefix)))?.limit ?? null;
  }

  async setLimitOverride(prefix: string, limit: number | null): Promise<void> {
    if (limit === null) await this.kv.delete(analyzerKeys.limit(prefix));
    else await this.kv.set(analyzerKeys.limit(prefix), { limit });
  }

  async used(prefix: string, periodStart: string): Promise<number> {
    return usedIn(await this.kv.get<UsageDoc>(analyzerKeys.usage(prefix)), periodStart);
  }

  /** Counts the shipments against the allowance and stores the analysis, in one atomic step. */
  async accept(input: NewAnalysis): Promise<AcceptResult> {
    const { prefix, shipments } = input;
    const id = input.id ?? newAnalysisId();
    const chunks = Math.ceil(shipments.length / CHUNK_SIZE);
    const doc: AnalysisDoc = {
      id, key_prefix: prefix, mode: input.mode, name: input.name, status: 'queued', total: shipments.length, done: 0, chunks,
      created_ms: input.nowMs, completed_ms: null, rejected_rows: input.rejected, rejected_count: input.rejectedCount,
      period_start: input.periodStart, given_back: 0, event_sequence: null, report: null, error: null,
    };
    const ttlMs = ANALYSIS_RETENTION_MS;
    const inputs = Array.from({ length: chunks }, (_, i) => ({
      key: analyzerKeys.input(prefix, id, i), value: shipments.slice(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE), ttlMs,
    }));
    return this.kv.transact<AcceptResult>([analyzerKeys.usage(prefix)], ([current]) => {
      const used = usedIn(current as UsageDoc | null, input.periodStart);
      const remaining = Math.max(0, input.limit - used);
      if (shipments.length > remaining) return { result: { ok: false, needed: shipments.length, remaining, limit: input.limit } };
      return {
        writes: [
          { key: analyzerKeys.usage(prefix), value: { period_start: input.periodStart, used: used + shipments.length } satisfies UsageDoc },
          { key: analyzerKeys.analysis(prefix, id), value: doc, ttlMs },
          ...inputs,
        ],
        listPushes: [{ key: analyzerKeys.list(prefix), value: id, keep: LIST_KEEP }],
        result: { ok: true, doc },
      };
    });
  }

  get(prefix: string, id: string): Promise<AnalysisDoc | null> {
    return this.kv.get<AnalysisDoc>(analyzerKeys.analysis(prefix, id));
  }

  /** The key's analyses, newest first, after the one named by `after` (a cursor), at most `limit`. */
  async list(prefix: string, after: string | null, limit: number): Promise<{ docs: AnalysisDoc[]; next: string | null }> {
    const ids = await this.kv.listRange<string>(analyzerKeys.list(prefix), LIST_KEEP);
    const start = after === null ? 0 : ids.indexOf(after) + 1;
    if (after !== null && start === 0) return { docs: [], next: null };
    const docs: AnalysisDoc[] = [];
    let i = start;
    // Expired analyses leave their id in the list: skip them, reading a page at a time.
    while (i < ids.length && docs.length < limit) {
      const page = ids.slice(i, i + limit - docs.length);
      const found = await this.kv.getMany<AnalysisDoc>(page.map((id) => analyzerKeys.analysis(prefix, id)));
      for (const d of found) if (d) docs.push(d);
      i += page.length;
    }
    return { docs, next: docs.length === limit && i < ids.length ? ids[i - 1]! : null };
  }

  inputChunk(prefix: string, id: string, chunk: number): Promise<ShipmentInput[] | null> {
    return this.kv.get<ShipmentInput[]>(analyzerKeys.input(prefix, id, chunk));
  }

  outputChunk(prefix: string, id: string, chunk: number): Promise<AnalyzedShipment[] | null> {
    return this.kv.get<AnalyzedShipment[]>(analyzerKeys.output(prefix, id, chunk));
  }

  /** Every analysed shipment, in input order (completed analyses). */
  async *shipments(doc: AnalysisDoc): AsyncGenerator<AnalyzedShipment> {
    for (let i = 0; i < doc.chunks; i++) {
      for (const s of (await this.outputChunk(doc.key_prefix, doc.id, i)) ?? []) yield s;
    }
  }

  async markRunning(prefix: string, id: string): Promise<AnalysisDoc | null> {
    return this.kv.update<AnalysisDoc, AnalysisDoc | null>(analyzerKeys.analysis(prefix, id), (doc) => {
      if (!doc) return { result: null };
      if (doc.status !== 'queued') return { result: doc };
      const next = { ...doc, status: 'running' as const };
      return { next, result: next, ttlMs: this.ttlLeft(doc) };
    });
  }

  /** A chunk's results and the progress they make, in one step; a chunk stored before counts once. */
  async storeChunk(prefix: string, id: string, chunk: number, rows: AnalyzedShipment[]): Promise<AnalysisDoc | null> {
    const docKey = analyzerKeys.analysis(prefix, id);
    const outKey = analyzerKeys.output(prefix, id, chunk);
    return this.kv.transact([docKey, outKey], ([docValue, existing]) => {
      const doc = docValue as AnalysisDoc | null;
      if (!doc || existing !== null || doc.status === 'completed') return { result: doc };
      const next = { ...doc, done: Math.min(doc.total, doc.done + rows.length) };
      const ttlMs = this.ttlLeft(doc);
      return { writes: [{ key: outKey, value: rows, ttlMs }, { key: docKey, value: next, ttlMs }], result: next };
    });
  }

  /** A chunk's results again after its carrier errors were retried; progress stays as it was. */
  async replaceChunk(prefix: string, id: string, chunk: number, rows: AnalyzedShipment[]): Promise<void> {
    const docKey = analyzerKeys.analysis(prefix, id);
    const outKey = analyzerKeys.output(prefix, id, chunk);
    await this.kv.transact([docKey, outKey], ([docValue, existing]) => {
      const doc = docValue as AnalysisDoc | null;
      if (!doc || existing === null || doc.status !== 'running') return { result: null };
      return { writes: [{ key: outKey, value: rows, ttlMs: this.ttlLeft(doc) }], result: null };
    });
  }

  /** Changes what the runner keeps of a running analysis (held, retry rounds); null when it is not running. */
  async patchRunning(prefix: string, id: string, patch: Pick<Partial<AnalysisDoc>, 'held' | 'retry_rounds'>): Promise<AnalysisDoc | null> {
    return this.kv.update<AnalysisDoc, AnalysisDoc | null>(analyzerKeys.analysis(prefix, id), (doc) => {
      if (!doc || doc.status !== 'running') return { result: null };
      const next = { ...doc, ...patch };
      return { next, result: next, ttlMs: this.ttlLeft(doc) };
    });
  }

  /** Ends an analysis that will not complete (`reason` says why); a completed one is left as it is. */
  async fail(prefix: string, id: string, reason: string, nowMs: number): Promise<void> {
    await this.kv.update<AnalysisDoc, null>(analyzerKeys.analysis(prefix, id), (doc) => (doc && doc.status !== 'completed' && doc.status !== 'failed'
      ? { next: { ...doc, status: 'failed', held: null, error: reason, completed_ms: nowMs }, result: null, ttlMs: ANALYSIS_RETENTION_MS }
      : { result: null }));
  }

  /**
   * Completes an analysis once: the report stored, the carrier errors' shipments given back to the
   * period they were counted in, the completion event's sequence drawn. A second call changes
   * nothing and answers null.
   */
  async complete(prefix: string, id: string, report: Report, nowMs: number): Promise<AnalysisDoc | null> {
    const keys = [analyzerKeys.analysis(prefix, id), analyzerKeys.usage(prefix), analyzerKeys.events(prefix)];
    return this.kv.transact(keys, ([docValue, usageValue, eventsValue]) => {
      const doc = docValue as AnalysisDoc | null;
      if (!doc || doc.status === 'completed' || doc.status === 'failed') return { result: null };
      const giveBack = report.totals.errors;
      const usage = usageValue as UsageDoc | null;
      const sequence = ((eventsValue as { seq: number } | null)?.seq ?? 0) + 1;
      const next: AnalysisDoc = {
        ...doc, status: 'completed', held: null, done: doc.total, completed_ms: nowMs, report, given_back: giveBack, event_sequence: sequence,
      };
      const writes: { key: string; value: unknown; ttlMs?: number }[] = [
        { key: keys[0]!, value: next, ttlMs: this.ttlLeft(doc) },
        { key: keys[2]!, value: { seq: sequence } },
      ];
      if (giveBack > 0 && usage && usage.period_start === doc.period_start) {
        writes.push({ key: keys[1]!, value: { ...usage, used: Math.max(0, usage.used - giveBack) } satisfies UsageDoc });
      }
      return { writes, result: next };
    });
  }

  /** Documents of an analysis expire together, 90 days after it was created. */
  private ttlLeft(doc: AnalysisDoc): number {
    return Math.max(1, doc.created_ms + ANALYSIS_RETENTION_MS - this.clock());
  }
}
