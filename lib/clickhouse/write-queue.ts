/**
 * The writer's queue: one part per write() call (a poll's rows always in one part), in order. A
 * flush takes whole parts from the front up to a size, so the rows of one poll always share a flush
 * (the writer's narrowed "already stored?" checks rely on a poll's events and shipments row never
 * being inserted before its carrier_polls row), and a failed flush's rows go back to the front.
 */
import type { CarrierPollRow, EventRow, PollRows, ShipmentRow } from './rows.ts';

export const WRITER_TABLES = ['carrier_polls', 'events', 'shipments'] as const;
export type WriterTable = (typeof WRITER_TABLES)[number];
export type TableCounts = Record<WriterTable, number>;

export interface RowOf {
  carrier_polls: CarrierPollRow;
  events: EventRow;
  shipments: ShipmentRow;
}
export type Batch = { [T in WriterTable]: RowOf[T][] };

export const zero = (): TableCounts => ({ carrier_polls: 0, events: 0, shipments: 0 });
const emptyBatch = (): Batch => ({ carrier_polls: [], events: [], shipments: [] });

interface Part {
  /** Sequence number of the write() that queued it (a requeued part keeps the newest it held). */
  seq: number;
  rows: Batch;
}

export class WriteQueue {
  private parts: Part[] = [];
  private readonly counts = zero();

  /** Queues one write's rows under `seq` (increasing). */
  push(seq: number, polls: readonly PollRows[]): void {
    const rows = emptyBatch();
    for (const one of polls) {
      rows.carrier_polls.push(one.poll);
      for (const event of one.events) rows.events.push(event);
      if (one.shipment) rows.shipments.push(one.shipment);
    }
    this.parts.push({ seq, rows });
    this.add(rows, 1);
  }

  /**
   * Takes whole parts from the front while no table exceeds `maxRows` (always at least one part).
   * Returns the rows and the newest seq taken (0 when empty).
   */
  take(maxRows: number): { batch: Batch; seq: number } {
    const batch = emptyBatch();
    let seq = 0;
    let taken = 0;
    for (const part of this.parts) {
      if (taken > 0 && WRITER_TABLES.some((t) => batch[t].length + part.rows[t].length > maxRows)) break;
      for (const t of WRITER_TABLES) for (const row of part.rows[t]) (batch[t] as unknown[]).push(row);
      seq = part.seq;
      taken++;
    }
    this.parts = this.parts.slice(taken);
    this.add(batch, -1);
    return { batch, seq };
  }

  /** Puts rows a flush could not store back at the front, ahead of newer rows. */
  requeue(seq: number, rows: Batch): void {
    this.parts.unshift({ seq, rows });
    this.add(rows, 1);
  }

  /** Drops every queued row; returns how many rows that was. */
  clear(): number {
    const rows = this.size;
    this.parts = [];
    for (const t of WRITER_TABLES) this.counts[t] = 0;
    return rows;
  }

  get queued(): TableCounts {
    return { ...this.counts };
  }

  get size(): number {
    return this.counts.carrier_polls + this.counts.events + this.counts.shipments;
  }

  /** Whether any table holds at least `rows` queued rows. */
  reaches(rows: number): boolean {
    return WRITER_TABLES.some((t) => this.counts[t] >= rows);
  }

  private add(rows: Batch, sign: 1 | -1): void {
    for (const t of WRITER_TABLES) this.counts[t] += sign * rows[t].length;
  }
}
