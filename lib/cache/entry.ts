/**
 * A cached shipment in compact form: the record's JSON text, prepared once when the poll is
 * normalized, plus the few facts every answer recomputes its insights (and the prediction) from.
 * It replaces the normalized object graph (~8 KB of V8 heap per shipment, most of it the events'
 * small objects and strings) with one flat string and one small object: the JSON's own length
 * plus ~600 bytes (`entryBytes`; measured: 5,512 bytes of heap for a 4,881-character record).
 */
import type { BaseRecord, NormalizedShipment, ShipmentFacts } from '../normalize/types.ts';
import { loadPlaces } from '../places/index.ts';
import { placeLookupOf } from '../prediction/places.ts';
import { queryFactsOf, type QueryFacts } from '../prediction/records.ts';
import type { PlaceLookup } from '../prediction/types.ts';

/** The places directory the prediction's position reads scans by (the default config's, loaded when first needed). */
let places: PlaceLookup | null = null;
const placesOfEntries = (): PlaceLookup => (places ??= placeLookupOf(loadPlaces()));

/** What insights and the delivery prediction read besides the facts (the rest is in `json`). */
export interface AnswerFacts {
  /** The record's carrier EDD and delivery time as it states them (insights: late, delay). */
  estimated_delivery_at: string | null;
  delivered_at: string | null;
  /** The delivery prediction's question but for the stage and the instant (lib/prediction). */
  query: QueryFacts;
}

export interface CachedShipment {
  carrier: string;
  awb: string;
  /**
   * `JSON.stringify` of the base record, where the `cached` and `stale` values end at `cachedAt`
   * and `staleAt` (each the 5 characters of `false`, replaced per answer) and the text ends with
   * its closing brace (the answer's `insights` goes before it).
   */
  json: string;
  cachedAt: number;
  staleAt: number;
  facts: ShipmentFacts;
  answer: AnswerFacts;
}

/** Where `"field":false` ends in `json` (the value is written at the end of the field). */
function valueEnd(json: string, field: 'cached' | 'stale'): number {
  const marker = `"${field}":false`;
  const at = json.indexOf(marker);
  // Normalization sets both to false (lib/normalize): the one place the base record is made.
  if (at < 0) throw new Error(`base record JSON without ${marker}`);
  return at + marker.length;
}

/** The compact cache form of a normalized shipment. */
export function compactShipment(shipment: NormalizedShipment): CachedShipment {
  const { record, facts } = shipment;
  // JSON escapes every quote inside a string, so `"cached":false` can only be the field itself
  // (no nested object of a record has a field of that name).
  const base: BaseRecord = { ...record, cached: false, stale: false };
  const json = JSON.stringify(base);
  return {
    carrier: record.carrier,
    awb: record.awb,
    json,
    cachedAt: valueEnd(json, 'cached'),
    staleAt: valueEnd(json, 'stale'),
    facts: { ...facts },
    answer: {
      estimated_delivery_at: record.estimated_delivery_at,
      delivered_at: record.delivered_at,
      // Read once here (the stage episodes walk the events), not per answer.
      query: queryFactsOf(record, facts, placesOfEntries()),
    },
  };
}

/**
 * The answer's JSON: the base record with this answer's `cached` and `stale`, then `insights`
 * (already JSON) last, exactly as `JSON.stringify(toTrackingRecord(…))` writes it.
 */
export function answerJson(entry: CachedShipment, cached: boolean, stale: boolean, insightsJson: string): string {
  const { json, cachedAt, staleAt } = entry;
  return json.slice(0, cachedAt - 5) + cached + json.slice(cachedAt, staleAt - 5) + stale + json.slice(staleAt, -1) + ',"insights":' + insightsJson + '}';
}

/**
 * What an entry costs in memory, for the cache's byte bound: its text (V8 keeps a string of
 * Latin-1 characters at one byte each, any other at two; JSON text has no control characters, so
 * space to U+00FF is the one-byte range) and ~600 bytes of objects (facts, query facts, the entry).
 */
export function entryBytes(entry: CachedShipment | null): number {
  if (entry === null) return 100;
  return (/[^ -\u00ff]/.test(entry.json) ? 2 : 1) * entry.json.length + 600;
}

/** The stored form of a cache entry (Redis, the embedded store's files): its format's version. */
const FORMAT = 2;

/**
 * A cache entry as text: one JSON line of what is not the record (format, poll time, offsets,
 * facts), then the record's JSON as it is, so reading one back parses ~300 bytes, not the record.
 */
export function entryText(entry: { shipment: CachedShipment | null; polledAtMs: number }): string {
  if (entry.shipment === null) return JSON.stringify({ v: FORMAT, p: entry.polledAtMs, s: null });
  const { json, ...rest } = entry.shipment;
  return `${JSON.stringify({ v: FORMAT, p: entry.polledAtMs, s: rest })}\n${json}`;
}

/** The entry `entryText` wrote, or null for text of any other form (read as a miss). */
export function entryOfText(text: string): { shipment: CachedShipment | null; polledAtMs: number } | null {
  const end = text.indexOf('\n');
  let head: { v?: unknown; p?: unknown; s?: Omit<CachedShipment, 'json'> | null };
  try {
    head = JSON.parse(end < 0 ? text : text.slice(0, end)) as typeof head;
  } catch {
    return null;
  }
  if (head === null || typeof head !== 'object' || head.v !== FORMAT || typeof head.p !== 'number') return null;
  if (head.s === null || head.s === undefined) return end < 0 && head.s === null ? { shipment: null, polledAtMs: head.p } : null;
  const json = end < 0 ? '' : text.slice(end + 1);
  const s = head.s;
  if (typeof s.cachedAt !== 'number' || typeof s.staleAt !== 'number' || json.slice(s.cachedAt - 5, s.cachedAt) !== 'false'
    || json.slice(s.staleAt - 5, s.staleAt) !== 'false' || !json.endsWith('}')) return null;
  return { shipment: { ...s, json }, polledAtMs: head.p };
}
