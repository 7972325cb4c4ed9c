/**
 * The analyzer's input rows (JSON items or CSV records, both as plain objects) checked one by one:
 * a bad row is rejected with its 1-based row number and consumes nothing; repeated carrier + AWB
 * rows merge (the first row's fields win, later rows fill what it left empty). Pure.
 */
import type { CarrierDetector } from '../detect/index.ts';
import { awbText, parseAwb } from '../schemas/index.ts';
import { IST_OFFSET } from '../time/index.ts';
import type { PaymentMode, RejectedRow, ShipmentInput } from './types.ts';

/** contracts.md: 1 to 20,000 shipments per analysis. */
export const MAX_ANALYSIS_ROWS = 20_000;
/** Rejected rows listed at most (the rest are counted in the message); a 20,000-row typo stays readable. */
export const MAX_REJECTED_LISTED = 1_000;

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * `promised_by` as epoch ms: a date means the end of that day in IST (23:59:59.999+05:30); a
 * date-time without an offset is IST (decisions.md "Time"). null when absent; NaN when invalid.
 */
export function promisedByMs(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') return Number.NaN;
  const text = value.trim();
  if (DATE_ONLY.test(text)) {
    return validDate(text) ? Date.parse(`${text}T23:59:59.999${IST_OFFSET}`) : Number.NaN;
  }
  if (!DATE_TIME.test(text)) return Number.NaN;
  const iso = text.replace(' ', 'T');
  const withOffset = /(Z|[+-]\d{2}:?\d{2})$/i.test(iso) ? iso : `${iso}${IST_OFFSET}`;
  return Date.parse(withOffset);
}

function validDate(text: string): boolean {
  const [, y, m, d] = DATE_ONLY.exec(text)!;
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}

export interface InputContext {
  /** Slug of a carrier name or alias, or null when unknown. */
  resolveCarrier(name: string): string | null;
  detector: Pick<CarrierDetector, 'detect'>;
}

/** Empty strings (CSV cells) count as absent. */
const present = (v: unknown) => v !== undefined && v !== null && v !== '';

function text(v: unknown): string | null | typeof BAD {
  if (!present(v)) return null;
  if (typeof v === 'string') return v.trim() || null;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return BAD;
}
const BAD = Symbol('bad');

/** One row checked: the shipment it names, or why it is rejected. */
export function checkRow(raw: Record<string, unknown>, row: number, ctx: InputContext): { input: ShipmentInput } | { rejected: RejectedRow } {
  // A JSON number is its digits; a refused row shows the text as given (trimmed), not upper-cased.
  const given = typeof raw.awb === 'number' ? String(raw.awb) : raw.awb;
  const shown = awbText(given);
  const reject = (code: RejectedRow['code']) => ({ rejected: { row, awb: shown === '' ? null : shown.slice(0, 64), code } });
  const awb = parseAwb(given);
  if (awb === null) return reject('invalid_awb');
  let carrier: string | null = null;
  let candidates: string[] = [];
  if (present(raw.carrier)) {
    carrier = typeof raw.carrier === 'string' ? ctx.resolveCarrier(raw.carrier.trim()) : null;
    if (!carrier) return reject('unsupported_carrier');
  } else {
    candidates = ctx.detector.detect(awb).candidates.map((c) => c.slug);
    if (candidates.length === 0) return reject('carrier_not_detected');
  }
  const orderId = text(raw.order_id);
  if (orderId === BAD || (orderId !== null && orderId.length > 128)) return reject('invalid_field');
  let paymentMode: PaymentMode | null = null;
  if (present(raw.payment_mode)) {
    const mode = typeof raw.payment_mode === 'string' ? raw.payment_mode.trim().toLowerCase() : '';
    if (mode !== 'cod' && mode !== 'prepaid') return reject('invalid_field');
    paymentMode = mode;
  }
  let value: number | null = null;
  if (present(raw.order_value_inr)) {
    value = typeof raw.order_value_inr === 'number'
      ? raw.order_value_inr
      : typeof raw.order_value_inr === 'string' ? Number(raw.order_value_inr.trim()) : Number.NaN;
    if (!Number.isFinite(value) || value < 0) return reject('invalid_field');
  }
  const promised = promisedByMs(raw.promised_by);
  if (promised !== null && Number.isNaN(promised)) return reject('invalid_field');
  return { input: { awb, carrier, candidates, order_id: orderId, payment_mode: paymentMode, order_value_inr: value, promised_by_ms: promised } };
}

/**
 * Collects checked rows: distinct shipments in first-seen order, rejected rows, and the row count.
 *
 * Rows merge after carrier detection (contracts.md: each distinct carrier + AWB counts once): a row
 * without a carrier is the same shipment as a row naming a carrier of the same AWB when detection
 * lists that carrier among its candidates (the best-ranked such carrier), so `{awb, carrier:
 * delhivery}`, `{awb}` and `{awb, carrier: DELHIVERY}` are one shipment of delhivery. Rows without
 * a carrier that match no named one stay one auto-detected shipment. Whatever order the rows come
 * in, the merged shipment sits where its first row was, with that row's fields first.
 */
export class InputCollector {
  readonly rejected: RejectedRow[] = [];
  rejectedCount = 0;
  rows = 0;
  /** Valid rows in input order; merged when `shipments` is read (a later row may name the carrier). */
  private readonly valid: ShipmentInput[] = [];
  /** Carriers named for each AWB, for the merge of rows without one. */
  private readonly named = new Map<string, Set<string>>();
  private merged: ShipmentInput[] | null = null;

  private readonly ctx: InputContext;
  constructor(ctx: InputContext) {
    this.ctx = ctx;
  }

  /** Adds one data row; false once past MAX_ANALYSIS_ROWS (the caller answers 413). */
  add(raw: Record<string, unknown>): boolean {
    this.rows++;
    if (this.rows > MAX_ANALYSIS_ROWS) return false;
    const checked = checkRow(raw, this.rows, this.ctx);
    if ('rejected' in checked) {
      this.rejectedCount++;
      if (this.rejected.length < MAX_REJECTED_LISTED) this.rejected.push(checked.rejected);
      return true;
    }
    const s = checked.input;
    this.valid.push(s);
    if (s.carrier !== null) {
      let carriers = this.named.get(s.awb);
      if (!carriers) this.named.set(s.awb, (carriers = new Set()));
      carriers.add(s.carrier);
    }
    this.merged = null;
    return true;
  }

  /** The distinct shipments (carrier + AWB), merged as the class comment says. */
  get shipments(): ShipmentInput[] {
    if (this.merged) return this.merged;
    const out: ShipmentInput[] = [];
    const at = new Map<string, number>();
    for (const row of this.valid) {
      const carrier = row.carrier ?? row.candidates.find((slug) => this.named.get(row.awb)?.has(slug)) ?? null;
      const s: ShipmentInput = carrier === row.carrier ? { ...row } : { ...row, carrier, candidates: [] };
      const id = `${carrier ?? '?'}:${s.awb}`;
      const seen = at.get(id);
      if (seen === undefined) {
        at.set(id, out.length);
        out.push(s);
        continue;
      }
      const first = out[seen]!;
      first.order_id ??= s.order_id;
      first.payment_mode ??= s.payment_mode;
      first.order_value_inr ??= s.order_value_inr;
      first.promised_by_ms ??= s.promised_by_ms;
    }
    this.merged = out;
    return out;
  }
}
