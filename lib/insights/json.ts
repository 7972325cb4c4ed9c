import { LRUCache } from 'lru-cache';
import type { BaseRecord } from '../normalize/types.ts';
import type { TrackingRecord } from '../schemas/index.ts';

/** The fields `toTrackingRecord` sets per answer, in the order its object literal adds them. */
const PER_ANSWER = ['cached', 'stale', 'insights'] as const;
type PerAnswerField = (typeof PER_ANSWER)[number];

/** A base record's JSON with a gap per per-answer field: `parts[i]`, field `slots[i]`, ..., last part. */
interface Template {
  parts: string[];
  slots: PerAnswerField[];
}

/**
 * Templates of the base records answered most recently: the hot shipments, whose answers repeat.
 * Bounded, as a template is as big as its record's JSON (~3 KB): one per entry of a 50,000-entry
 * cache would double its memory for entries that are rarely asked for twice.
 */
const templates = new LRUCache<BaseRecord, Template>({ max: 2_000 });

function templateOf(base: BaseRecord): Template {
  const parts = ['{'];
  const slots: PerAnswerField[] = [];
  let separator = '';
  const gap = (field: PerAnswerField) => {
    parts[parts.length - 1] += `${separator}"${field}":`;
    slots.push(field);
    parts.push('');
    separator = ',';
  };
  for (const [field, value] of Object.entries(base)) {
    if ((PER_ANSWER as readonly string[]).includes(field)) {
      gap(field as PerAnswerField);
      continue;
    }
    const text = JSON.stringify(value) as string | undefined;
    // JSON.stringify leaves out fields whose value has no JSON form (undefined).
    if (text === undefined) continue;
    parts[parts.length - 1] += `${separator}${JSON.stringify(field)}:${text}`;
    separator = ',';
  }
  // A field new to the base is added after the base's own, as the object spread does.
  for (const field of PER_ANSWER) if (!Object.hasOwn(base, field)) gap(field);
  parts[parts.length - 1] += '}';
  return { parts, slots };
}

/**
 * The JSON text of a tracking record made by `toTrackingRecord(base, …)`, exactly as
 * `JSON.stringify(record)` writes it: the base record's fields (the same for every answer from one
 * cache entry, so written once per entry) around `cached`, `stale` and `insights` (new per answer).
 * Serializing the ~3 KB record was the largest cost of a cached lookup after the socket write.
 */
export function trackingRecordJson(record: TrackingRecord, base: BaseRecord): string {
  let template = templates.get(base);
  // Every answer of a shipment shares its cache entry's base record object, so identity is the key.
  if (template === undefined) {
    template = templateOf(base);
    templates.set(base, template);
  }
  const { parts, slots } = template;
  let text = parts[0]!;
  for (let i = 0; i < slots.length; i++) text += JSON.stringify(record[slots[i]!]) + parts[i + 1]!;
  return text;
}
